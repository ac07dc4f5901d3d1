// Loaded as a classic script in <head> (inline script is forbidden by the CSP) so the
// stored theme applies before the first paint: no light flash in a dark window.
try {
  var t = localStorage.getItem("numi.theme");
  if (t === "light" || t === "dark") document.documentElement.dataset.theme = t;
} catch (e) { /* storage off: follow the system */ }
