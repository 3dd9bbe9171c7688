// Pushgate console: refreshes the overview's figures from /console/api/overview every 5 seconds and
// redraws the chart. The page shows the same figures without it.
"use strict";

(function () {
  var OUTCOMES = ["delivered", "invalid_token", "retry_later", "rejected"];
  var SVG = "http://www.w3.org/2000/svg";

  function dashed(name) {
    return name.split("_").join("-");
  }

  function duration(seconds) {
    var d = Math.floor(seconds / 86400), h = Math.floor((seconds % 86400) / 3600);
    var m = Math.floor((seconds % 3600) / 60), s = Math.floor(seconds % 60);
    if (d > 0) return d + " d " + h + " h";
    if (h > 0) return h + " h " + m + " min";
    if (m > 0) return m + " min " + s + " s";
    return s + " s";
  }

  function milliseconds(value) {
    var tenths = Math.round(value * 10);
    return Math.floor(tenths / 10) + "." + (tenths % 10) + " ms";
  }

  function providerState(app) {
    var parts = [];
    if (app.latency_ms) parts.push("p50 " + milliseconds(app.latency_ms.p50) + ", p99 " + milliseconds(app.latency_ms.p99));
    parts.push(app.in_flight + " in flight");
    parts.push(app.circuit === "per_service" ? "circuits per push service" : "circuit " + app.circuit);
    if (app.credentials === "refused") parts.push("credentials refused");
    return parts.join(", ");
  }

  function setText(root, testid, text) {
    var element = root.querySelector('[data-testid="' + testid + '"]');
    if (element && element.textContent !== String(text)) element.textContent = String(text);
  }

  function drawChart(points) {
    var svg = document.querySelector('[data-testid="chart"]');
    if (!svg || !points || points.length === 0) return;
    var width = 600, height = 160, peak = 1;
    points.forEach(function (point) {
      OUTCOMES.forEach(function (outcome) { peak = Math.max(peak, point[outcome] || 0); });
    });
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    var axis = document.createElementNS(SVG, "line");
    axis.setAttribute("class", "axis");
    axis.setAttribute("x1", "0"); axis.setAttribute("y1", "160");
    axis.setAttribute("x2", "600"); axis.setAttribute("y2", "160");
    svg.appendChild(axis);
    OUTCOMES.forEach(function (outcome) {
      var coordinates = points.map(function (point, index) {
        var x = points.length > 1 ? index * width / (points.length - 1) : 0;
        var y = height - (point[outcome] || 0) * (height - 10) / peak;
        return Math.round(x) + "," + Math.round(y);
      });
      var line = document.createElementNS(SVG, "polyline");
      line.setAttribute("class", "line " + outcome);
      line.setAttribute("data-outcome", outcome);
      line.setAttribute("points", coordinates.join(" "));
      svg.appendChild(line);
    });
  }

  // The banner above the page: a problem's text, or hidden.
  function showProblem(text) {
    var banner = document.querySelector('[data-testid="problem"]');
    if (!banner) return;
    if (text) {
      if (banner.textContent !== text) banner.textContent = text;
      banner.hidden = false;
    } else {
      banner.hidden = true;
    }
  }

  // The configuration generation the page was written for, and its apps' ids in order.
  var renderedGeneration = null;

  function shownApps() {
    var rows = document.querySelectorAll('[data-testid="app-row"]');
    return Array.prototype.map.call(rows, function (row) { return row.getAttribute("data-app-id"); }).join("\n");
  }

  // A reload of the configuration that changed the list of apps: the page (its table and the test push's
  // list of apps) is written again by the server. Only for a generation the page was not written for, so
  // a page that differs from the API for another reason is not loaded again and again.
  function appsChanged(overview) {
    if (!overview.gateway || renderedGeneration === null) return false;
    if (String(overview.gateway.configuration_generation) === renderedGeneration) return false;
    var listed = (overview.apps || []).map(function (app) { return app.id; }).join("\n");
    return listed !== shownApps();
  }

  function apply(overview) {
    if (appsChanged(overview)) {
      // The overview page anew (a GET, also after a test push's POST, which a reload would send again).
      window.location.replace("/console");
      return;
    }
    // Without the store's answer (`problem`), its figures are unknown, not zero: those shown stay, the
    // banner says why, and only this instance's own figures (provider lines, uptime) are refreshed.
    var storeAnswered = !overview.problem;
    showProblem(overview.problem);
    if (overview.gateway) {
      setText(document, "gateway-store", overview.gateway.store + ", " + (overview.gateway.store_healthy ? "answering" : "not answering"));
    }
    (overview.apps || []).forEach(function (app) {
      var rows = document.querySelectorAll('[data-testid="app-row"]');
      for (var i = 0; i < rows.length; i++) {
        if (rows[i].getAttribute("data-app-id") !== app.id) continue;
        setText(rows[i], "provider-state", providerState(app));
        if (!storeAnswered) continue;
        OUTCOMES.forEach(function (outcome) {
          setText(rows[i], "count-" + dashed(outcome), app.last_hour[outcome]);
          setText(rows[i], "day-" + dashed(outcome), "(" + app.last_day[outcome] + ")");
        });
        setText(rows[i], "outbox-pending", app.outbox_pending);
        setText(rows[i], "outbox-age", duration(app.outbox_oldest_age_seconds));
      }
    });
    if (overview.outbox && storeAnswered) {
      setText(document, "outbox-total", overview.outbox.pending);
      setText(document, "outbox-oldest", duration(overview.outbox.oldest_age_seconds));
    }
    if (overview.gateway) {
      setText(document, "gateway-uptime", duration(overview.gateway.uptime_seconds));
      setText(document, "gateway-generation", overview.gateway.configuration_generation);
    }
    (overview.front_ends || []).forEach(function (frontEnd) {
      // Each figure as the page writes it (the server's `shown` text).
      Object.keys(frontEnd.shown || {}).forEach(function (key) {
        setText(document, "fe-" + frontEnd.name + "-" + key, frontEnd.shown[key]);
      });
    });
    if (overview.instances) setText(document, "gateway-instances", overview.instances.join(", "));
    if (storeAnswered) drawChart(overview.chart);
    document.body.setAttribute("data-refreshed", String(Date.now()));
  }

  function refresh() {
    fetch("/console/api/overview", { credentials: "same-origin", headers: { "Accept": "application/json" } })
      .then(function (response) {
        if (response.status === 401) { window.location.assign("/console/session"); return null; }
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.json();
      })
      .then(function (overview) { if (overview) apply(overview); })
      .catch(function (error) {
        // The figures shown are older than they look: said so until a refresh succeeds (the next tries).
        showProblem("The figures could not be refreshed (" + error.message + "); those shown are from " + new Date(Number(document.body.getAttribute("data-refreshed")) || Date.now()).toLocaleTimeString() + ".");
      });
  }

  document.addEventListener("DOMContentLoaded", function () {
    if (!document.querySelector('[data-testid="apps-table"]')) return;
    var generation = document.querySelector('[data-testid="gateway-generation"]');
    if (generation) renderedGeneration = generation.textContent.trim();
    refresh();
    window.setInterval(refresh, 5000);
  });
})();
