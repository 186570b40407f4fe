/* Clinician view: selecting a claim (mouse or keyboard) shows its card with the marked evidence. */
(function () {
  "use strict";
  var cards = Array.prototype.slice.call(document.querySelectorAll(".claim-card"));
  var links = Array.prototype.slice.call(document.querySelectorAll("a[data-claim]"));
  if (!cards.length) { return; }
  document.documentElement.classList.add("js");

  function show(number, focus) {
    var target = document.getElementById("claim-" + number);
    if (!target) { return; }
    cards.forEach(function (card) { card.hidden = card !== target; });
    links.forEach(function (link) {
      if (link.dataset.claim === String(number)) { link.setAttribute("aria-current", "true"); }
      else { link.removeAttribute("aria-current"); }
    });
    if (focus) { target.focus(); }
  }

  links.forEach(function (link) {
    link.addEventListener("click", function (event) {
      event.preventDefault();
      show(link.dataset.claim, true);
      if (window.history && window.history.replaceState) {
        window.history.replaceState(null, "", "#claim-" + link.dataset.claim);
      }
    });
  });

  var fromHash = /^#claim-(\d+)$/.exec(window.location.hash);
  show(fromHash ? fromHash[1] : cards[0].id.replace("claim-", ""), false);
})();
