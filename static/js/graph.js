// The Knowledge graph page: draws the graph the server laid out (positions come with
// the data) on a canvas. Drag the background to pan, scroll to zoom, drag a node to
// move it, hover to highlight its connections, click to open its panel.
(function () {
  "use strict";

  var COLOURS = {
    person: "#d1495b", organisation: "#3456d1", project: "#1e8a4c", tool: "#b7791f",
    place: "#7b4fc9", concept: "#2a9d8f", other: "#8a94a6"
  };
  var LABELS = 120; // most labels drawn at once, biggest nodes first

  function start() {
    var canvas = document.getElementById("graph-canvas");
    if (!canvas) return;
    var ctx = canvas.getContext("2d");
    var status = document.getElementById("graph-status");
    var panel = document.getElementById("graph-panel");
    var form = document.getElementById("graph-controls");
    var state = {
      nodes: [], edges: [], labelled: [], byRef: {}, scale: 1, tx: 0, ty: 0,
      hover: null, selected: null, drag: null, dirty: true, frames: 0
    };
    window.conceptGraph = state;

    function radius(node) { return 4 + 2.5 * Math.log2(1 + node.mentions); }

    function resize() {
      var dpr = window.devicePixelRatio || 1;
      var rect = canvas.getBoundingClientRect();
      canvas.width = Math.max(1, Math.round(rect.width * dpr));
      canvas.height = Math.max(1, Math.round(rect.height * dpr));
      state.stale = state.dirty = true;
    }

    function toScreen(node) {
      return { x: node.x * state.scale + state.tx, y: node.y * state.scale + state.ty };
    }

    function toWorld(x, y) {
      return { x: (x - state.tx) / state.scale, y: (y - state.ty) / state.scale };
    }

    state.screenPosition = function (ref) {
      var node = state.byRef[ref];
      if (!node) return null;
      var rect = canvas.getBoundingClientRect();
      var p = toScreen(node);
      return { x: rect.left + p.x, y: rect.top + p.y };
    };

    function nodeAt(x, y) {
      var w = toWorld(x, y), best = null, bestD = Infinity;
      for (var i = 0; i < state.nodes.length; i++) {
        var n = state.nodes[i], dx = n.x - w.x, dy = n.y - w.y, d = dx * dx + dy * dy;
        var r = radius(n) / state.scale + 3 / state.scale;
        if (d <= r * r && d < bestD) { best = n; bestD = d; }
      }
      return best;
    }

    function setHover(node) {
      if (node === state.hover) return;
      state.hover = node;
      var refs = node ? [node.ref].concat(Object.keys(node.neighbours)) : [];
      canvas.dataset.hover = node ? node.ref : "";
      canvas.dataset.highlighted = refs.join(",");
      canvas.style.cursor = node ? "pointer" : "grab";
      state.stale = state.dirty = true;
    }

    // The graph is painted on a layer larger than the view by MARGIN on every side; a
    // frame that only pans copies the layer shifted, and the layer is painted again when
    // the graph, the zoom or the highlight changes, or a pan passes the margin.
    var MARGIN = 400;
    var layer = document.createElement("canvas");
    var lctx = layer.getContext("2d");

    function paint() {
      var ctx = lctx;
      var dpr = window.devicePixelRatio || 1;
      var rect = canvas.getBoundingClientRect();
      layer.width = Math.round((rect.width + 2 * MARGIN) * dpr);
      layer.height = Math.round((rect.height + 2 * MARGIN) * dpr);
      ctx.setTransform(dpr, 0, 0, dpr, MARGIN * dpr, MARGIN * dpr);
      var focus = state.hover || state.selected;
      var lit = focus ? focus.neighbours : null;
      var s = state.scale, tx = state.tx, ty = state.ty;
      ctx.lineWidth = 1;
      ctx.strokeStyle = focus ? "rgba(120,130,150,0.15)" : "rgba(120,130,150,0.45)";
      ctx.beginPath();
      for (var i = 0; i < state.edges.length; i++) {
        var e = state.edges[i];
        if (focus && (e.a === focus || e.b === focus)) continue;
        ctx.moveTo(e.a.x * s + tx, e.a.y * s + ty);
        ctx.lineTo(e.b.x * s + tx, e.b.y * s + ty);
      }
      ctx.stroke();
      if (focus) {
        ctx.strokeStyle = "#141a2b";
        ctx.lineWidth = 2;
        ctx.beginPath();
        for (var j = 0; j < state.edges.length; j++) {
          var f = state.edges[j];
          if (f.a !== focus && f.b !== focus) continue;
          ctx.moveTo(f.a.x * s + tx, f.a.y * s + ty);
          ctx.lineTo(f.b.x * s + tx, f.b.y * s + ty);
        }
        ctx.stroke();
      }
      for (var type in COLOURS) {
        ctx.fillStyle = COLOURS[type];
        ctx.globalAlpha = 1;
        ctx.beginPath();
        var faded = [];
        for (var k = 0; k < state.nodes.length; k++) {
          var n = state.nodes[k];
          if (n.kind !== type) continue;
          if (lit && n !== focus && !lit[n.ref]) { faded.push(n); continue; }
          var r = n.r;
          ctx.moveTo(n.x * s + tx + r, n.y * s + ty);
          ctx.arc(n.x * s + tx, n.y * s + ty, r, 0, 2 * Math.PI);
        }
        ctx.fill();
        if (faded.length) {
          ctx.globalAlpha = 0.2;
          ctx.beginPath();
          for (var m = 0; m < faded.length; m++) {
            var g = faded[m];
            ctx.moveTo(g.x * s + tx + g.r, g.y * s + ty);
            ctx.arc(g.x * s + tx, g.y * s + ty, g.r, 0, 2 * Math.PI);
          }
          ctx.fill();
          ctx.globalAlpha = 1;
        }
      }
      if (focus) {
        ctx.strokeStyle = "#141a2b";
        ctx.lineWidth = 2;
        ctx.beginPath();
        ctx.arc(focus.x * s + tx, focus.y * s + ty, focus.r + 2, 0, 2 * Math.PI);
        ctx.stroke();
      }
      ctx.fillStyle = "#1d2433";
      ctx.font = "12px system-ui, sans-serif";
      var shown = 0;
      for (var l = 0; l < state.labelled.length && shown < LABELS; l++) {
        var node = state.labelled[l];
        if (lit && node !== focus && !lit[node.ref]) continue;
        var x = node.x * s + tx, y = node.y * s + ty;
        if (x < -MARGIN || y < -MARGIN || x > rect.width + MARGIN || y > rect.height + MARGIN) continue;
        ctx.fillText(node.name, x + node.r + 3, y + 4);
        shown++;
      }
    }

    function draw() {
      state.frames++;
      var p = state.painted;
      if (state.stale || !p || p.scale !== state.scale ||
          Math.abs(state.tx - p.tx) > MARGIN || Math.abs(state.ty - p.ty) > MARGIN) {
        paint();
        p = state.painted = { scale: state.scale, tx: state.tx, ty: state.ty };
        state.stale = false;
      }
      var dpr = window.devicePixelRatio || 1;
      ctx.setTransform(1, 0, 0, 1, 0, 0);
      ctx.clearRect(0, 0, canvas.width, canvas.height);
      ctx.drawImage(
        layer,
        Math.round((MARGIN - (state.tx - p.tx)) * dpr), Math.round((MARGIN - (state.ty - p.ty)) * dpr),
        canvas.width, canvas.height, 0, 0, canvas.width, canvas.height
      );
    }

    function loop() {
      window.requestAnimationFrame(loop);
      if (state.dirty) { state.dirty = false; draw(); }
    }

    function fit() {
      var rect = canvas.getBoundingClientRect();
      if (!state.nodes.length) return;
      var minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
      state.nodes.forEach(function (n) {
        minX = Math.min(minX, n.x); maxX = Math.max(maxX, n.x);
        minY = Math.min(minY, n.y); maxY = Math.max(maxY, n.y);
      });
      var w = Math.max(maxX - minX, 1e-3), h = Math.max(maxY - minY, 1e-3);
      state.scale = 0.85 * Math.min(rect.width / w, rect.height / h);
      if (state.nodes.length === 1) state.scale = 1;
      state.tx = rect.width / 2 - ((minX + maxX) / 2) * state.scale;
      state.ty = rect.height / 2 - ((minY + maxY) / 2) * state.scale;
      state.dirty = true;
    }

    function centreOn(node) {
      var rect = canvas.getBoundingClientRect();
      state.tx = rect.width / 2 - node.x * state.scale;
      state.ty = rect.height / 2 - node.y * state.scale;
      state.dirty = true;
    }

    function load(params) {
      status.textContent = "Loading…";
      var url = canvas.dataset.url + "?" + new URLSearchParams(params).toString();
      return fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (response) {
          return response.json().then(function (body) { return { ok: response.ok, body: body }; });
        })
        .then(function (answer) {
          if (!answer.ok) { status.textContent = answer.body.detail || "The graph could not be loaded."; return; }
          show(answer.body);
        })
        .catch(function () { status.textContent = "The graph could not be loaded."; });
    }

    function show(data) {
      // Layout positions are in [-1, 1]; spread them so nodes have room.
      var spread = 300 * Math.max(1, Math.sqrt(data.nodes.length) / 5);
      state.byRef = {};
      state.nodes = data.nodes.map(function (n) {
        var node = {
          ref: n.ref, name: n.name, kind: COLOURS[n.type] ? n.type : "other", type: n.type,
          mentions: n.mentions, x: n.x * spread, y: n.y * spread, neighbours: {}
        };
        node.r = radius(node);
        state.byRef[n.ref] = node;
        return node;
      });
      state.edges = [];
      data.edges.forEach(function (e) {
        var a = state.byRef[e.s], b = state.byRef[e.o];
        if (!a || !b) return;
        a.neighbours[b.ref] = true; b.neighbours[a.ref] = true;
        state.edges.push({ a: a, b: b, relation: e.r, weight: e.w });
      });
      state.labelled = state.nodes.slice().sort(function (p, q) { return q.mentions - p.mentions; });
      state.hover = null; state.selected = null; state.stale = true;
      canvas.dataset.nodes = state.nodes.length;
      canvas.dataset.edges = state.edges.length;
      status.textContent = state.nodes.length
        ? "Showing " + state.nodes.length + " entities and " + state.edges.length + " relations."
        : "No entities yet: write some facts, or press Build.";
      fit();
      if (data.center && state.byRef[data.center]) {
        state.selected = state.byRef[data.center];
        centreOn(state.selected);
        open(state.selected);
      }
      canvas.dataset.ready = "true";
    }

    function open(node) {
      state.selected = node;
      canvas.dataset.selected = node.ref;
      state.stale = state.dirty = true;
      var url = canvas.dataset.entityUrl.replace(/REF\/$/, encodeURIComponent(node.ref) + "/");
      fetch(url, { credentials: "same-origin" })
        .then(function (response) { return response.ok ? response.text() : Promise.reject(); })
        .then(function (html) { panel.innerHTML = html; })
        .catch(function () { panel.textContent = "This entity could not be loaded."; });
    }

    function params() {
      var data = new FormData(form), out = {};
      var center = (data.get("center") || "").trim();
      var hops = data.get("hops");
      if (center && hops) { out.center = center; out.hops = hops; }
      if (data.get("type")) out.type = data.get("type");
      if (data.get("relation")) out.relation = data.get("relation");
      return { query: out, center: center, hops: hops };
    }

    function findByName(name) {
      var wanted = name.toLowerCase(), best = null;
      state.nodes.forEach(function (n) {
        var have = n.name.toLowerCase();
        if (have === wanted) best = n;
        else if (!best && have.indexOf(wanted) !== -1) best = n;
      });
      return best;
    }

    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var chosen = params();
      load(chosen.query).then(function () {
        if (chosen.center && !chosen.hops) {
          var node = findByName(chosen.center);
          if (node) { centreOn(node); open(node); }
          else status.textContent = "No entity named " + chosen.center + " in this view.";
        }
      });
    });

    panel.addEventListener("click", function (event) {
      var link = event.target.closest("[data-focus]");
      if (!link) return;
      event.preventDefault();
      var node = state.byRef[link.dataset.focus];
      if (node) { centreOn(node); open(node); }
    });

    var press = null;
    canvas.addEventListener("pointerdown", function (event) {
      var rect = canvas.getBoundingClientRect();
      var x = event.clientX - rect.left, y = event.clientY - rect.top;
      var node = nodeAt(x, y);
      press = { x: x, y: y, node: node, tx: state.tx, ty: state.ty, moved: false };
      canvas.setPointerCapture(event.pointerId);
    });
    canvas.addEventListener("pointermove", function (event) {
      var rect = canvas.getBoundingClientRect();
      var x = event.clientX - rect.left, y = event.clientY - rect.top;
      if (!press) { setHover(nodeAt(x, y)); return; }
      if (Math.abs(x - press.x) + Math.abs(y - press.y) > 3) press.moved = true;
      if (press.node) {
        var w = toWorld(x, y);
        press.node.x = w.x; press.node.y = w.y;
        state.stale = true;
      } else {
        state.tx = press.tx + (x - press.x);
        state.ty = press.ty + (y - press.y);
      }
      state.dirty = true;
    });
    canvas.addEventListener("pointerup", function () {
      if (press && press.node && !press.moved) open(press.node);
      press = null;
    });
    canvas.addEventListener("pointerleave", function () { if (!press) setHover(null); });
    canvas.addEventListener("wheel", function (event) {
      event.preventDefault();
      var rect = canvas.getBoundingClientRect();
      var x = event.clientX - rect.left, y = event.clientY - rect.top;
      var factor = Math.exp(-event.deltaY * 0.0015);
      var scale = Math.min(50, Math.max(0.02, state.scale * factor));
      state.tx = x - (x - state.tx) * (scale / state.scale);
      state.ty = y - (y - state.ty) * (scale / state.scale);
      state.scale = scale;
      canvas.dataset.scale = scale.toFixed(4);
      state.dirty = true;
    }, { passive: false });
    window.addEventListener("resize", resize);

    state.load = load;
    resize();
    window.requestAnimationFrame(loop);
    // A link to the page may choose the type or relation shown (?type=person).
    load(params().query);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
