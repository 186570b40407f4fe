/* Patient chat: POST /v1/chat/completions with stream:true and render the SSE stream as it arrives.
   Model text is only ever inserted with textContent (never innerHTML). */
(function () {
  "use strict";

  var form = document.getElementById("ask-form");
  var textarea = document.getElementById("question");
  var button = document.getElementById("ask");
  var conversation = document.getElementById("conversation");
  var statusRegion = document.getElementById("status");
  var model = form.dataset.model || "trust-gateway";
  var apiKey = form.dataset.apiKey || "";
  var tierNames = {};
  try { tierNames = JSON.parse(form.dataset.tiers || "{}"); } catch (e) { tierNames = {}; }
  var compactTier = {
    regulatory: "Regulator", clinical_reference: "Reference", guideline: "Guideline",
    educational: "Education", unknown: "Unknown"
  };
  var history = [];
  var busy = false;

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) { node.className = className; }
    if (text !== undefined && text !== null) { node.textContent = text; }
    return node;
  }

  function announce(message) {
    statusRegion.textContent = "";
    window.setTimeout(function () { statusRegion.textContent = message; }, 50);
  }

  function setBusy(value) {
    busy = value;
    button.disabled = value;
    button.textContent = value ? "Checking…" : "Ask";
    conversation.setAttribute("aria-busy", value ? "true" : "false");
  }

  function appendUser(question) {
    var item = el("li", "msg msg-user");
    item.appendChild(el("span", "msg-label", "You asked"));
    item.appendChild(el("p", "answer-text", question));
    conversation.appendChild(item);
  }

  function appendAssistant() {
    var item = el("li", "msg msg-assistant");
    item.appendChild(el("span", "msg-label", "Answer"));
    var text = el("p", "answer-text streaming");
    item.appendChild(text);
    conversation.appendChild(item);
    item.scrollIntoView({ block: "end" });
    return { item: item, text: text };
  }

  async function errorMessage(response) {
    try {
      var body = await response.json();
      if (body && body.error && body.error.message) { return body.error.message; }
    } catch (e) { /* not JSON */ }
    return "The service answered with an error (" + response.status + ").";
  }

  async function streamAnswer(bubble) {
    var headers = { "Content-Type": "application/json", "Accept": "text/event-stream" };
    if (apiKey) { headers.Authorization = "Bearer " + apiKey; }
    var response = await fetch("/v1/chat/completions", {
      method: "POST",
      headers: headers,
      credentials: "omit",
      body: JSON.stringify({ model: model, stream: true, messages: history })
    });
    if (!response.ok || !response.body) { throw new Error(await errorMessage(response)); }
    var result = { text: "", trust: null, requestId: response.headers.get("x-request-id") || "" };
    var reader = response.body.getReader();
    var decoder = new TextDecoder();
    var buffer = "";
    var finished = false;
    while (!finished) {
      var chunk = await reader.read();
      if (chunk.done) { break; }
      buffer += decoder.decode(chunk.value, { stream: true }).replace(/\r\n?/g, "\n");
      var boundary;
      while ((boundary = buffer.indexOf("\n\n")) >= 0) {
        var rawEvent = buffer.slice(0, boundary);
        buffer = buffer.slice(boundary + 2);
        if (handleEvent(rawEvent, result, bubble)) { finished = true; break; }
      }
    }
    return result;
  }

  /* Returns true on [DONE]. */
  function handleEvent(rawEvent, result, bubble) {
    var data = rawEvent.split("\n")
      .filter(function (line) { return line.indexOf("data:") === 0; })
      .map(function (line) { return line.slice(5).replace(/^ /, ""); })
      .join("\n");
    if (!data) { return false; }
    if (data === "[DONE]") { return true; }
    var payload = JSON.parse(data);
    if (payload.error) { throw new Error(payload.error.message || "The answer could not be produced."); }
    if (!result.requestId && payload.id) { result.requestId = String(payload.id).replace(/^chatcmpl-/, ""); }
    var choice = payload.choices && payload.choices[0];
    if (choice && choice.delta && typeof choice.delta.content === "string" && choice.delta.content) {
      result.text += choice.delta.content;
      bubble.text.textContent = result.text;
    }
    if (payload.trust) { result.trust = payload.trust; }
    return false;
  }

  function sourceFor(trust, number) {
    var sources = (trust && trust.sources) || [];
    for (var i = 0; i < sources.length; i++) {
      if (String(sources[i].id) === String(number)) { return sources[i]; }
    }
    return null;
  }

  function tierChip(tier, label, compact) {
    var name = compact ? (compactTier[tier] || tierNames[tier] || tier) : (tierNames[tier] || label || tier);
    var chip = el("span", "tier tier-" + (tier || "unknown"), name);
    chip.title = label || name;
    return chip;
  }

  function renderCited(bubble, result) {
    var trust = result.trust;
    var text = result.text;
    var anchorBase = "src-" + (result.requestId || "answer") + "-";
    var marker = /\[(\d+(?:\s*,\s*\d+)*)\]/g;
    var paragraph = el("p", "answer-text");
    var cited = [];
    var last = 0;
    var match;
    while ((match = marker.exec(text)) !== null) {
      paragraph.appendChild(document.createTextNode(text.slice(last, match.index)));
      match[1].split(",").forEach(function (part) {
        var number = part.trim();
        var source = sourceFor(trust, number);
        if (!source) { paragraph.appendChild(document.createTextNode("[" + number + "]")); return; }
        if (cited.indexOf(number) < 0) { cited.push(number); }
        var link = el("a", "cite");
        link.href = "#" + anchorBase + number;
        link.setAttribute("aria-label", "Source " + number + ": " + source.title + ", " + source.tier_label);
        link.appendChild(el("span", "cite-num", number));
        link.appendChild(tierChip(source.tier, source.tier_label, true));
        paragraph.appendChild(link);
      });
      last = match.index + match[0].length;
    }
    paragraph.appendChild(document.createTextNode(text.slice(last)));
    bubble.item.replaceChild(paragraph, bubble.text);
    bubble.text = paragraph;

    var summary = trust.summary || {};
    var kept = (summary.claims || 0) - (summary.removed || 0);
    var notes = [];
    if (kept > 0) { notes.push(kept + (kept === 1 ? " fact was" : " facts were") + " checked against the sources."); }
    if (summary.rewritten) { notes.push(summary.rewritten + " reworded to match its source."); }
    if (summary.removed) {
      notes.push(summary.removed + (summary.removed === 1 ? " statement was" : " statements were") +
        " left out because the sources did not support it.");
    }
    if (notes.length) { bubble.item.appendChild(el("p", "check-note", notes.join(" "))); }

    if (cited.length) {
      var box = el("div", "sources");
      var headingId = anchorBase + "heading";
      var heading = el("h3", "", "Sources");
      heading.id = headingId;
      box.appendChild(heading);
      var list = el("ol");
      list.setAttribute("aria-labelledby", headingId);
      cited.forEach(function (number) {
        var source = sourceFor(trust, number);
        var item = el("li");
        item.id = anchorBase + number;
        item.value = Number(number);
        if (isHttpUrl(source.url)) {
          var link = el("a", "", source.title);
          link.href = source.url;
          link.target = "_blank";
          link.rel = "noopener noreferrer";
          link.appendChild(el("span", "sr-only", " (opens in a new tab)"));
          item.appendChild(link);
        } else {
          item.appendChild(el("span", "source-title", source.title));
        }
        var meta = " · " + source.org + (source.reviewed_on ? " · reviewed " + source.reviewed_on : " · undated") + " ";
        item.appendChild(el("span", "source-meta", meta));
        item.appendChild(tierChip(source.tier, source.tier_label, false));
        list.appendChild(item);
      });
      box.appendChild(list);
      bubble.item.appendChild(box);
    }
  }

  // Only http(s) URLs become links: a javascript: or data: URL from a source is shown as text.
  function isHttpUrl(value) {
    return typeof value === "string" && /^https?:\/\//i.test(value.trim());
  }

  function renderNotice(bubble, kind, title, text) {
    var notice = el("div", "notice notice-" + kind);
    notice.setAttribute("role", kind === "emergency" ? "alert" : "status");
    notice.appendChild(el("h3", "", title));
    notice.appendChild(el("p", "", text));
    bubble.item.replaceChild(notice, bubble.text);
    bubble.text = notice;
    bubble.item.classList.add("msg-" + kind);
  }

  function finish(bubble, result) {
    bubble.text.classList.remove("streaming");
    var trust = result.trust;
    if (!trust) {
      renderNotice(bubble, "error", "This answer could not be checked",
        "The check of this answer did not complete, so please do not rely on it. Try again in a moment.");
      return "The answer could not be checked.";
    }
    if (trust.scope === "emergency") {
      renderNotice(bubble, "emergency", "This could be an emergency", result.text);
      return "Emergency: " + result.text;
    }
    if (trust.summary && trust.summary.refused) {
      renderNotice(bubble, "refusal", "I can't answer this one", result.text);
      return "No answer: " + result.text;
    }
    renderCited(bubble, result);
    return "Answer ready.";
  }

  async function ask() {
    if (busy) { return; }
    var question = textarea.value.trim();
    if (!question) {
      announce("Please type a question first.");
      textarea.focus();
      return;
    }
    appendUser(question);
    history.push({ role: "user", content: question });
    textarea.value = "";
    setBusy(true);
    announce("Checking the answer against vetted sources…");
    var bubble = appendAssistant();
    try {
      var result = await streamAnswer(bubble);
      var spoken = finish(bubble, result);
      history.push({ role: "assistant", content: result.text });
      announce(spoken);
    } catch (err) {
      bubble.text.classList.remove("streaming");
      renderNotice(bubble, "error", "Something went wrong", (err && err.message) || "The answer could not be produced.");
      history.pop();
      announce("Something went wrong. " + ((err && err.message) || ""));
    } finally {
      setBusy(false);
      bubble.item.scrollIntoView({ block: "nearest" });
      textarea.focus();
    }
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    ask();
  });
  textarea.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      ask();
    }
  });
})();
