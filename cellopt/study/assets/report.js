(() => {
  "use strict";
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
  for (const box of document.querySelectorAll("input[data-toggle]")) {
    // a radio button's change fires on the one chosen only: sync its whole group
    const group = box.type === "radio" ? [...document.querySelectorAll(`input[name="${box.name}"]`)] : [box];
    const sync = () => { for (const b of group) row.classList.toggle(b.dataset.toggle, b.checked); };
    box.addEventListener("change", sync);
    sync();
  }
  window.addEventListener("resize", apply);
  row.dataset.ready = "1";
  draw();
})();
