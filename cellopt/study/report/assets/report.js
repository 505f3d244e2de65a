(() => {
  "use strict";
  // ---- sortable tables: a click on a header sorts by its column (again: the other way round)
  const collator = new Intl.Collator(undefined, {numeric: true, sensitivity: "base"});
  const missing = t => t === "" || t === "\u2013";  // the page shows a missing value as "–"
  const asNumber = t => Number(t.replace(/\u2212/g, "-").replace("\u221e", "Infinity"));
  for (const table of document.querySelectorAll(".sortable > table")) {
    const head = table.tHead && table.tHead.rows[0], body = table.tBodies[0];
    if (!head || !body) continue;
    const ths = [...head.cells];
    ths.forEach((th, col) => {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      button.title = "Sort by this column";
      button.append(...th.childNodes);
      th.append(button);
      button.addEventListener("click", () => {
        const up = th.getAttribute("aria-sort") !== "ascending", sign = up ? 1 : -1;
        const numeric = th.dataset.sort === "num";
        for (const h of ths) h.removeAttribute("aria-sort");
        th.setAttribute("aria-sort", up ? "ascending" : "descending");
        const keyed = [...body.rows].map(row => {
          const t = row.cells[col] ? row.cells[col].textContent.trim() : "";
          let key = missing(t) ? null : numeric ? asNumber(t) : t;
          if (numeric && Number.isNaN(key)) key = null;
          return [row, key];
        });
        keyed.sort(([, a], [, b]) => {  // missing values last, either way
          if (a === null || b === null) return (a === null) - (b === null);
          return sign * (numeric ? (a < b ? -1 : a > b ? 1 : 0) : collator.compare(a, b));
        });
        body.append(...keyed.map(k => k[0]));
      });
    });
  }

  // ---- the map
  const svg = document.getElementById("map"), row = document.getElementById("map-row");
  if (!svg || !row) return;
  const home = svg.getAttribute("viewBox").split(/[\s,]+/).map(Number);
  let vb = home.slice();
  const bar = document.getElementById("scale-bar"), label = document.getElementById("scale-label");
  const perPixel = () => {  // metres per screen pixel ("meet": the larger ratio)
    const r = svg.getBoundingClientRect();
    return r.width > 0 && r.height > 0 ? Math.max(vb[2] / r.width, vb[3] / r.height) : vb[2] / 1000;
  };
  let frame = 0, lastK = NaN;
  const apply = () => { if (!frame) frame = requestAnimationFrame(draw); };
  const draw = () => {
    frame = 0;
    svg.setAttribute("viewBox", vb.map(v => +v.toFixed(2)).join(" "));
    const k = perPixel();
    if (k !== lastK) { svg.style.setProperty("--k", k); lastK = k; }
    const target = 110 * k, p10 = Math.pow(10, Math.floor(Math.log10(target)));
    let nice = p10;
    for (const m of [2, 5]) if (m * p10 <= target) nice = m * p10;
    bar.style.width = (nice / k).toFixed(1) + "px";
    label.textContent = nice >= 1000 ? (nice / 1000) + " km" : nice + " m";
  };
  const zoom = (f, cx, cy) => {  // f > 1 zooms in around the fixed point (cx, cy) [user units]
    const w = Math.min(home[2] * 5, Math.max(home[2] / 500, vb[2] / f)), g = w / vb[2];
    vb = [cx - (cx - vb[0]) * g, cy - (cy - vb[1]) * g, vb[2] * g, vb[3] * g];
    apply();
  };
  const toUser = ev => {
    const m = svg.getScreenCTM();
    if (!m) return [vb[0] + vb[2] / 2, vb[1] + vb[3] / 2];
    const p = new DOMPoint(ev.clientX, ev.clientY).matrixTransform(m.inverse());
    return [p.x, p.y];
  };
  const centre = () => [vb[0] + vb[2] / 2, vb[1] + vb[3] / 2];
  svg.addEventListener("wheel", ev => {
    ev.preventDefault();
    const [x, y] = toUser(ev);
    zoom(Math.exp(-ev.deltaY * (ev.deltaMode ? 0.05 : 0.0015)), x, y);
  }, {passive: false});
  let drag = null;
  svg.addEventListener("pointerdown", ev => {
    if (ev.button !== 0) return;
    drag = [ev.clientX, ev.clientY];
    svg.setPointerCapture(ev.pointerId);
    svg.classList.add("dragging");
  });
  svg.addEventListener("pointermove", ev => {
    if (!drag) return;
    const k = perPixel();
    vb[0] -= (ev.clientX - drag[0]) * k;
    vb[1] -= (ev.clientY - drag[1]) * k;
    drag = [ev.clientX, ev.clientY];
    apply();
  });
  const end = () => { drag = null; svg.classList.remove("dragging"); };
  svg.addEventListener("pointerup", end);
  svg.addEventListener("pointercancel", end);
  svg.addEventListener("dblclick", ev => { const [x, y] = toUser(ev); zoom(2, x, y); });
  document.getElementById("zoom-in").addEventListener("click", () => zoom(1.5, ...centre()));
  document.getElementById("zoom-out").addEventListener("click", () => zoom(1 / 1.5, ...centre()));
  document.getElementById("zoom-reset").addEventListener("click", () => { vb = home.slice(); apply(); });
  const group = box => box.type === "radio" ? [...document.querySelectorAll(`input[name="${box.name}"]`)] : [box];
  for (const box of document.querySelectorAll("input[data-toggle]")) {
    // a radio button's change fires on the one chosen only: sync its whole group
    const boxes = group(box);
    const sync = () => { for (const b of boxes) row.classList.toggle(b.dataset.toggle, b.checked); };
    box.addEventListener("change", sync);
    sync();
  }
  for (const box of document.querySelectorAll("input[data-show]")) {
    // shows the elements whose ids it lists while it is checked (outlines, coverage layers)
    const boxes = group(box);
    const sync = () => {
      for (const b of boxes.filter(b => !b.checked).concat(boxes.filter(b => b.checked))) {
        for (const id of b.dataset.show.split(" ")) {
          const node = id && document.getElementById(id);
          if (node) node.style.display = b.checked ? "" : "none";
        }
      }
    };
    box.addEventListener("change", sync);
    sync();
  }
  const coverage = [...document.querySelectorAll('input[name="coverage"]')];
  const coverageShown = () => row.classList.toggle("cov-shown", coverage.some(b => b.checked && b.dataset.show));
  for (const box of coverage) box.addEventListener("change", coverageShown);
  coverageShown();

  // ---- the method shown: the page data holds each method's state, the markers are shared
  const dataNode = document.getElementById("map-data");
  if (dataNode) {
    const data = JSON.parse(dataNode.textContent), tiers = data.tiers;
    const text = refs => refs.map(k => data.lines[k]).join("\n");  // a tooltip from its lines
    const users = [...document.querySelectorAll("#layer-users .user")];
    const cells = [...document.querySelectorAll("#layer-cells .cell")];
    const labels = [...document.querySelectorAll("#layer-offsets .olabel")];  // offset labels
    const assoc = document.getElementById("layer-assoc"), heading = document.getElementById("map-method");
    const counts = [...document.querySelectorAll("[data-count]")];
    const tables = [...document.querySelectorAll("[data-method]")];
    const show = m => {
      const d = data.methods[m];
      const lines = document.createDocumentFragment();
      users.forEach((el, i) => {
        const f = +d.f[i], t = tiers[+d.t[i]], guard = f & 1 ? " guard" : "";
        el.setAttribute("class", "user t-" + t + guard + (f & 2 ? " unusable" : "") + (f & 4 ? " absent" : ""));
        el.firstChild.textContent = text(d.ut[i]);
        if (d.lx[i] === null) return;
        const p = document.createElementNS(svg.namespaceURI, "path");
        p.setAttribute("class", "assoc t-" + t + guard);
        p.setAttribute("d", `M${el.getAttribute("cx")} ${el.getAttribute("cy")}L${d.lx[i]} ${d.ly[i]}`);
        lines.append(p);
      });
      assoc.replaceChildren(lines);
      cells.forEach((el, j) => {
        const present = d.cs[j] !== null;
        el.classList.toggle("absent", !present);
        if (present) { el.setAttribute("style", d.cs[j]); el.firstChild.textContent = text(d.ct[j]); }
      });
      if (d.ol) for (const el of labels) {
        const t = d.ol[+el.dataset.cell] ?? null;
        el.classList.toggle("absent", t === null);
        el.firstChild.textContent = t ?? "";
      }
      for (const node of counts) node.textContent = d.n[node.dataset.count] ?? 0;
      for (const node of tables) node.hidden = node.dataset.method !== d.name;
      if (heading) heading.textContent = ": " + d.name;
      row.dataset.method = d.name;
    };
    for (const radio of document.querySelectorAll('input[name="method"]')) {
      radio.addEventListener("change", () => { if (radio.checked) show(+radio.value); });
      if (radio.checked && +radio.value !== data.selected) show(+radio.value);  // a reload kept a choice
    }
    if (!row.dataset.method) row.dataset.method = data.methods[data.selected].name;
  }
  window.addEventListener("resize", apply);
  row.dataset.ready = "1";
  draw();
})();
