// The Knowledge graph page, drawn with Cytoscape.js (static/vendor/cytoscape/).
//
// It opens on a focused view: the most mentioned entities and the relations among them,
// or the neighbourhood of the entity searched for. Clicking an entity opens its panel
// (its relations and the facts behind each) and adds its neighbours around it. Labels
// are shown by importance (mentions, then connections) where they fit: each time the
// view settles, the most important labels are placed first and a label that would
// overlap one already placed, or be too small to read, stays hidden.
(function () {
  "use strict";

  var COLOURS = {
    person: "#d1495b", organisation: "#3456d1", project: "#1e8a4c", tool: "#b7791f",
    place: "#7b4fc9", concept: "#2a9d8f", other: "#8a94a6"
  };
  var OPENING_AREA = 4000; // screen pixels per entity on the opening view (30 to 150)
  var NEIGHBOURS = 40;  // most neighbours one click adds
  var SPACING = 55;     // typical distance between an entity and its nearest, in graph units
  // Cytoscape adds an inline stylesheet unless an element with this id exists; the CSP
  // forbids inline styles, and app.css holds its one rule (the container is positioned).
  var STYLESHEET_MARK = "__________cytoscape_stylesheet";

  function radius(mentions) { return 7 + 3 * Math.log2(1 + mentions); }
  // A label's size on screen, whatever the zoom: the more mentioned, the larger.
  function fontSize(mentions) { return Math.min(16, 11 + 0.8 * Math.log2(1 + mentions)); }

  var STYLE = [
    { selector: "node", style: {
      "background-color": "data(colour)", width: "data(size)", height: "data(size)",
      label: "data(label)", "font-size": "data(fs)", "font-family": "system-ui, sans-serif",
      color: "#1d2433", "text-valign": "bottom", "text-halign": "center", "text-margin-y": "data(tm)",
      "text-opacity": 0,
      "text-background-color": "#ffffff", "text-background-opacity": 0.75,
      "text-background-padding": "1px", "min-zoomed-font-size": 0,
      "border-width": 1, "border-color": "#ffffff"
    } },
    // Above the other entities, so that no entity hides a label shown.
    { selector: "node.labelled", style: { "text-opacity": 1, "z-index": 10 } },
    { selector: "node.expanded", style: { "border-width": 2, "border-color": "#64708a" } },
    { selector: "node.chosen", style: { "border-width": 3, "border-color": "#141a2b" } },
    { selector: "edge", style: {
      width: "data(width)", "line-color": "#aab3c3", "curve-style": "haystack", opacity: 0.6
    } },
    { selector: ".faded", style: { opacity: 0.15 } },
    { selector: "edge.lit", style: { "line-color": "#141a2b", opacity: 1 } }
  ];

  function start() {
    var el = document.getElementById("graph-view");
    if (!el) return;
    var status = document.getElementById("graph-status");
    var panel = document.getElementById("graph-panel");
    var form = document.getElementById("graph-controls");
    if (!window.cytoscape) { status.textContent = "The graph could not be drawn."; return; }
    if (!document.getElementById(STYLESHEET_MARK)) {
      var mark = document.createElement("meta");
      mark.id = STYLESHEET_MARK;
      document.head.appendChild(mark);
    }
    var cy = window.cytoscape({
      container: el, style: STYLE, minZoom: 0.02, maxZoom: 8,
      boxSelectionEnabled: false, selectionType: "single",
      // While panning or zooming, move a picture of the graph instead of drawing it again.
      textureOnViewport: true
    });
    var state = { cy: cy, order: [], chosen: null, total: Number(el.dataset.total) || 0, mode: "" };
    window.conceptGraph = state;

    // --- Labels -----------------------------------------------------------------------

    function rank() {
      state.order = cy.nodes().toArray().sort(function (a, b) {
        return (b.data("mentions") - a.data("mentions")) || (b.degree() - a.degree()) ||
          (a.data("name") < b.data("name") ? -1 : a.data("name") > b.data("name") ? 1 : 0);
      });
    }

    function labelBox(node) {
      return node.renderedBoundingBox({
        includeNodes: false, includeEdges: false, includeLabels: true, includeOverlays: false
      });
    }

    // Labels keep their size on screen: the sizes in graph units follow the zoom.
    function labelSizes(nodes, zoom) {
      nodes.forEach(function (node) {
        node.data({ fs: node.data("font") / zoom, tm: 2 / zoom });
      });
    }

    function bodyBox(node) {
      return node.renderedBoundingBox({ includeLabels: false, includeEdges: false, includeOverlays: false });
    }

    function meets(b) {
      return function (p) { return b.x1 < p.x2 && p.x1 < b.x2 && b.y1 < p.y2 && p.y1 < b.y2; };
    }

    // The most important labels first; one is shown where it meets no label shown, and
    // neither meets an entity whose label is shown (such an entity is drawn above the
    // others, so it would cover a label under it).
    function placeLabels() {
      var zoom = cy.zoom(), width = el.clientWidth, height = el.clientHeight;
      var placed = [], bodies = [];
      if (state.labelZoom !== zoom) {
        var opening = state.labelZoom === null;  // made at this zoom: measured right
        cy.batch(function () { labelSizes(cy.nodes(), zoom); });
        cy.nodes().updateStyle();
        state.labelZoom = zoom;
        if (!opening) {
          // Cytoscape measures a label again once it has drawn it at its new size:
          // place the labels by those measures, after the next frame is drawn.
          window.requestAnimationFrame(function () { window.requestAnimationFrame(placeLabels); });
          return;
        }
      }
      cy.batch(function () {
        state.order.forEach(function (node) {
          var show = false;
          if (!node.hasClass("faded")) {
            var b = labelBox(node), body = bodyBox(node);
            show = b.w > 0 && b.x2 > 0 && b.y2 > 0 && b.x1 < width && b.y1 < height &&
              !placed.some(meets(b)) && !bodies.some(meets(b)) && !placed.some(meets(body));
            if (show) { placed.push(b); bodies.push(body); }
          }
          if (show !== node.hasClass("labelled")) node.toggleClass("labelled", show);
        });
      });
      el.dataset.labels = placed.length;
    }

    var settle = null;
    function placeLabelsSoon() {
      window.clearTimeout(settle);
      state.settling = true;
      settle = window.setTimeout(function () { state.settling = false; placeLabels(); }, 90);
    }
    cy.on("viewport", function () {
      el.dataset.scale = cy.zoom().toFixed(4);
      placeLabelsSoon();
    });
    cy.on("dragfree", "node", placeLabelsSoon);
    window.addEventListener("resize", function () { cy.resize(); placeLabelsSoon(); });

    // --- Loading ----------------------------------------------------------------------

    function fetchGraph(query) {
      var url = el.dataset.url + "?" + new URLSearchParams(query).toString();
      return fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (response) {
          return response.json().then(function (body) {
            if (!response.ok) throw new Error(body.detail || "The graph could not be loaded.");
            return body;
          });
        });
    }

    function nodeData(n, zoom) {
      var kind = COLOURS[n.type] ? n.type : "other";
      return {
        group: "nodes",
        data: {
          id: n.ref, name: n.name, label: n.name.length > 40 ? n.name.slice(0, 39) + "…" : n.name,
          type: n.type, mentions: n.mentions, colour: COLOURS[kind],
          size: 2 * radius(n.mentions), font: fontSize(n.mentions),
          fs: fontSize(n.mentions) / zoom, tm: 2 / zoom
        }
      };
    }

    function edgeData(e) {
      return {
        group: "edges",
        data: {
          id: e.s + " " + e.r + " " + e.o, source: e.s, target: e.o, relation: e.r, weight: e.w,
          width: Math.min(4, 1 + Math.log2(e.w))
        }
      };
    }

    // The server's positions are in [-1, 1]; scale them so that an entity's nearest
    // neighbour is about SPACING away, whatever the number of entities.
    function scaleOf(nodes) {
      if (nodes.length < 2) return SPACING;
      var nearest = nodes.map(function (a) {
        var best = Infinity;
        for (var i = 0; i < nodes.length; i++) {
          var b = nodes[i];
          if (a === b) continue;
          var d = (a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y);
          if (d > 0 && d < best) best = d;
        }
        return Math.sqrt(best);
      }).filter(isFinite).sort(function (p, q) { return p - q; });
      var median = nearest[Math.floor(nearest.length / 2)] || 1;
      return SPACING / median;
    }

    // The whole graph in view, but a small one not blown up past its natural size.
    function fitAll(animate) {
      var zoom = Math.min(1.5, Math.max(cy.minZoom(), fitZoom()));
      var box = cy.elements().boundingBox({ includeLabels: false });
      var pan = {
        x: el.clientWidth / 2 - zoom * (box.x1 + box.x2) / 2,
        y: el.clientHeight / 2 - zoom * (box.y1 + box.y2) / 2
      };
      if (animate) cy.animate({ zoom: zoom, pan: pan }, { duration: 250 });
      else cy.viewport({ zoom: zoom, pan: pan });
    }

    function fitZoom() {
      var box = cy.elements().boundingBox({ includeLabels: false }), pad = 30;
      if (!cy.elements().length || !box.w || !box.h) return 1;
      return Math.min((el.clientWidth - 2 * pad) / box.w, (el.clientHeight - 2 * pad) / box.h);
    }

    function counts() {
      el.dataset.nodes = cy.nodes().length;
      el.dataset.edges = cy.edges().length;
      var shown = cy.nodes().length, edges = cy.edges().length;
      status.textContent = !shown
        ? "No entities yet: write some facts, or press Build."
        : "Showing " + shown + (state.total > shown ? " of " + state.total : "") +
          " entities and " + edges + " relations" +
          (state.mode ? " (" + state.mode + ")" : "") + ". Click an entity to add its neighbours.";
    }

    function show(data, mode) {
      var scale = scaleOf(data.nodes);
      // The zoom the view will open at, so that labels are made at their size.
      var xs = data.nodes.map(function (n) { return n.x * scale; });
      var ys = data.nodes.map(function (n) { return n.y * scale; });
      var span = Math.max(1, Math.max.apply(null, xs.concat(0)) - Math.min.apply(null, xs.concat(0)));
      var rise = Math.max(1, Math.max.apply(null, ys.concat(0)) - Math.min.apply(null, ys.concat(0)));
      var zoom = Math.min(1.5, (el.clientWidth - 80) / span, (el.clientHeight - 80) / rise);
      cy.batch(function () {
        cy.elements().remove();
        cy.add(data.nodes.map(function (n) {
          var item = nodeData(n, zoom);
          item.position = { x: n.x * scale, y: n.y * scale };
          return item;
        }));
        cy.add(data.edges.filter(function (e) { return e.s !== e.o; }).map(edgeData));
      });
      state.chosen = null;
      state.mode = mode;
      rank();
      counts();
      fitAll();
      state.labelZoom = null;
      placeLabels();
      if (!el.dataset.firstDraw) {
        cy.one("render", function () {
          el.dataset.firstDraw = Math.round(performance.now());
        });
      }
      el.dataset.ready = "true";
    }

    function load(query, mode) {
      status.textContent = "Loading…";
      el.dataset.ready = "false";
      return fetchGraph(query)
        .then(function (data) {
          show(data, mode || "");
          if (data.center) choose(cy.getElementById(data.center), false);
          return data;
        })
        .catch(function (error) { status.textContent = error.message; el.dataset.ready = "true"; });
    }

    // --- Choosing and expanding -------------------------------------------------------

    function openPanel(node) {
      var url = el.dataset.entityUrl.replace(/REF\/$/, encodeURIComponent(node.id()) + "/");
      return fetch(url, { credentials: "same-origin" })
        .then(function (response) { return response.ok ? response.text() : Promise.reject(); })
        .then(function (html) { panel.innerHTML = html; })
        .catch(function () { panel.textContent = "This entity could not be loaded."; });
    }

    // Its neighbours not yet shown, on a ring around it; the relations they bring.
    function expand(node) {
      if (node.hasClass("expanded")) return Promise.resolve(0);
      var query = { ref: node.id(), hops: 1, limit: NEIGHBOURS + 1 };
      var filters = new FormData(form);
      if (filters.get("type")) query.type = filters.get("type");
      if (filters.get("relation")) query.relation = filters.get("relation");
      return fetchGraph(query).then(function (data) {
        if (node.removed()) return 0;
        var fresh = data.nodes.filter(function (n) { return cy.getElementById(n.ref).empty(); });
        var centre = node.position();
        var ring = Math.max(2 * SPACING, (fresh.length * SPACING) / (2 * Math.PI));
        // Start the ring facing away from the middle of the graph, where there is room.
        var middle = cy.nodes().boundingBox();
        var away = Math.atan2(centre.y - (middle.y1 + middle.y2) / 2,
                              centre.x - (middle.x1 + middle.x2) / 2);
        cy.batch(function () {
          fresh.forEach(function (n, i) {
            var angle = away + (2 * Math.PI * i) / fresh.length;
            var item = nodeData(n, cy.zoom());
            item.position = { x: centre.x + ring * Math.cos(angle), y: centre.y + ring * Math.sin(angle) };
            cy.add(item);
          });
          data.edges.forEach(function (e) {
            var item = edgeData(e);
            if (e.s !== e.o && cy.getElementById(item.data.id).empty()) cy.add(item);
          });
          node.addClass("expanded");
        });
        rank();
        counts();
        cy.animate({ fit: { eles: node.closedNeighborhood(), padding: 40 } }, { duration: 250 });
        placeLabelsSoon();
        return fresh.length;
      }).catch(function (error) { status.textContent = error.message; return 0; });
    }

    function choose(node, grow) {
      if (!node || node.empty()) return Promise.resolve();
      cy.nodes(".chosen").removeClass("chosen");
      node.addClass("chosen");
      state.chosen = node;
      el.dataset.selected = node.id();
      var panelShown = openPanel(node);
      if (grow === false) {
        cy.animate({ center: { eles: node } }, { duration: 200 });
        return panelShown;
      }
      return Promise.all([panelShown, expand(node)]);
    }

    function highlight(node) {
      cy.batch(function () {
        cy.elements().removeClass("faded lit");
        if (node) {
          var near = node.closedNeighborhood();
          cy.elements().not(near).addClass("faded");
          node.connectedEdges().addClass("lit");
        }
      });
      el.dataset.hover = node ? node.id() : "";
      el.dataset.highlighted = node ? node.closedNeighborhood().nodes().map(function (n) { return n.id(); }).join(",") : "";
      placeLabels();
    }

    cy.on("tap", "node", function (event) { choose(event.target); });
    cy.on("mouseover", "node", function (event) { highlight(event.target); el.classList.add("over-node"); });
    cy.on("mouseout", "node", function () { highlight(null); el.classList.remove("over-node"); });

    // --- Controls ---------------------------------------------------------------------

    function chosenQuery() {
      var data = new FormData(form), query = {};
      var center = (data.get("center") || "").trim();
      if (data.get("type")) query.type = data.get("type");
      if (data.get("relation")) query.relation = data.get("relation");
      if (center) { query.center = center; query.hops = data.get("hops") || 1; }
      else {
        var area = el.clientWidth * el.clientHeight;
        query.limit = Math.max(30, Math.min(150, Math.round(area / OPENING_AREA)));
      }
      return { query: query, center: center };
    }

    function open() {
      var chosen = chosenQuery();
      var mode = chosen.center ? "around " + chosen.center : "the most mentioned";
      return load(chosen.query, mode);
    }

    form.addEventListener("submit", function (event) { event.preventDefault(); open(); });

    document.getElementById("graph-fit").addEventListener("click", function () {
      fitAll(true);
    });
    document.getElementById("graph-top").addEventListener("click", function () {
      document.getElementById("graph-search").value = "";
      open();
    });

    panel.addEventListener("click", function (event) {
      var link = event.target.closest("[data-focus]");
      if (!link) return;
      event.preventDefault();
      var node = cy.getElementById(link.dataset.focus);
      if (node.nonempty()) choose(node);
      else load({ ref: link.dataset.focus, hops: 1 }, "around " + link.textContent);
    });

    state.load = load;
    state.expand = function (ref) { return expand(cy.getElementById(ref)); };
    state.placeLabels = placeLabels;
    state.labelBoxes = function () {
      return cy.nodes(".labelled").map(function (n) {
        var b = labelBox(n);
        return { ref: n.id(), name: n.data("name"), x1: b.x1, y1: b.y1, x2: b.x2, y2: b.y2 };
      });
    };
    state.screenPosition = function (ref) {
      var node = cy.getElementById(ref);
      if (node.empty()) return null;
      var rect = el.getBoundingClientRect(), p = node.renderedPosition();
      return { x: rect.left + p.x, y: rect.top + p.y };
    };
    open();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
