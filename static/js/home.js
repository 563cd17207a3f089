// Home: each canvas marked data-chart draws a column of the table it names, with
// Chart.js (static/vendor/chart.js). The table stays on the page as the chart's text
// alternative, and a bar whose row links somewhere opens that link.
//
//   data-chart   the id of the table
//   data-column  which cell of each body row holds the number (the first names the row;
//                its data-short, when set, is the axis label)
//   data-color   the CSS custom property the bars take
//   data-kind    "horizontal" for bars along the x axis

(() => {
  const Chart = window.Chart;
  if (!Chart) {
    return;
  }
  const root = getComputedStyle(document.documentElement);
  const cssVar = (name) => root.getPropertyValue(name).trim();

  Chart.defaults.font.family = getComputedStyle(document.body).fontFamily;
  Chart.defaults.color = cssVar("--muted");
  Chart.defaults.borderColor = cssVar("--line");

  function rowsOf(table, column) {
    return Array.from(table.tBodies[0].rows, (row) => {
      const head = row.cells[0];
      const link = head.querySelector("a[href]");
      return {
        label: head.dataset.short || head.textContent.trim(),
        value: Number(row.cells[column].textContent.trim()) || 0,
        href: link ? link.href : "",
      };
    });
  }

  function draw(canvas) {
    const table = document.getElementById(canvas.dataset.chart);
    if (!table || Chart.getChart(canvas)) {
      return;
    }
    const rows = rowsOf(table, Number(canvas.dataset.column) || 1);
    const horizontal = canvas.dataset.kind === "horizontal";
    const valueAxis = { beginAtZero: true, ticks: { precision: 0 }, grace: "5%" };
    const labelAxis = {
      grid: { display: false },
      ticks: { autoSkip: !horizontal, maxRotation: 0 },
    };
    const linked = (elements) => (elements.length ? rows[elements[0].index].href : "");
    new Chart(canvas, {
      type: "bar",
      data: {
        labels: rows.map((row) => row.label),
        datasets: [
          {
            data: rows.map((row) => row.value),
            backgroundColor: cssVar(canvas.dataset.color || "--accent"),
            borderRadius: 3,
            maxBarThickness: horizontal ? 18 : 24,
          },
        ],
      },
      options: {
        indexAxis: horizontal ? "y" : "x",
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        plugins: { legend: { display: false } },
        scales: horizontal ? { x: valueAxis, y: labelAxis } : { x: labelAxis, y: valueAxis },
        onClick: (_event, elements) => {
          const href = linked(elements);
          if (href) {
            window.location.assign(href);
          }
        },
        onHover: (event, elements) => {
          event.native.target.style.cursor = linked(elements) ? "pointer" : "";
        },
      },
    });
  }

  document.addEventListener("DOMContentLoaded", () => {
    document.querySelectorAll("canvas[data-chart]").forEach(draw);
  });
})();
