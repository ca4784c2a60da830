// Suggestions as the user types. Text is only ever set with textContent.
(function () {
  "use strict";
  var form = document.getElementById("search");
  var box = document.getElementById("q");
  var list = document.getElementById("suggestions");
  var index = document.getElementById("index");
  var pending = null;
  var active = -1;

  // Keep typing after the text that is already there.
  box.setSelectionRange(box.value.length, box.value.length);

  function hide() { list.hidden = true; active = -1; }

  function choose(text) {
    box.value = text;
    hide();
    form.submit();
  }

  function show(suggestions) {
    list.replaceChildren();
    suggestions.forEach(function (text) {
      var item = document.createElement("li");
      item.setAttribute("role", "option");
      item.textContent = text;
      item.addEventListener("mousedown", function (event) {
        event.preventDefault();
        choose(text);
      });
      list.appendChild(item);
    });
    list.hidden = suggestions.length === 0;
    active = -1;
  }

  function highlight(step) {
    var items = list.querySelectorAll("li");
    if (!items.length) { return; }
    active = (active + step + items.length) % items.length;
    items.forEach(function (item, i) { item.classList.toggle("active", i === active); });
  }

  box.addEventListener("input", function () {
    var typed = box.value;
    if (pending) { pending.abort(); }
    if (!typed.trim()) { hide(); return; }
    pending = new AbortController();
    var url = "/api/suggest?" + new URLSearchParams({ index: index.value, q: typed });
    fetch(url, { signal: pending.signal })
      .then(function (response) { return response.json(); })
      .then(function (data) { if (box.value === typed) { show(data.suggestions || []); } })
      .catch(function () {});
  });

  box.addEventListener("keydown", function (event) {
    if (list.hidden) { return; }
    if (event.key === "ArrowDown") { event.preventDefault(); highlight(1); }
    else if (event.key === "ArrowUp") { event.preventDefault(); highlight(-1); }
    else if (event.key === "Escape") { hide(); }
    else if (event.key === "Enter" && active >= 0) {
      event.preventDefault();
      choose(list.querySelectorAll("li")[active].textContent);
    }
  });

  box.addEventListener("blur", hide);
  index.addEventListener("change", function () { if (box.value.trim()) { form.submit(); } });
})();
