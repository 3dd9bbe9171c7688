"""The operator console in a real headless browser (Debian's chromium and chromium-driver, Selenium).

Run by ConsoleBrowserEndToEndTests with one argument: a JSON file naming the gateway's base URL, the
admin tokens, the counts each app's row must show, a token and text for the test push, every secret
that must never appear in a page, and where screenshots go. Prints what it checked; exits 1 listing
every failed check.
"""

import json
import os
import re
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.support.ui import WebDriverWait

settings = json.load(open(sys.argv[1]))
base = settings["base"]
output = settings["output"]
os.makedirs(output, exist_ok=True)
failures = []
pages = []


def settled(read, attempts=20):
    """What `read` returns once no element it found was replaced by the page's refresh meanwhile (on a
    loaded machine a refresh can land between finding an element and reading it)."""
    for attempt in range(attempts):
        try:
            return read()
        except StaleElementReferenceException:
            if attempt == attempts - 1:
                raise
            time.sleep(0.25)


def check(condition, message):
    print(("ok   " if condition else "FAIL ") + message, flush=True)
    if not condition:
        failures.append(message)


class NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


opener = urllib.request.build_opener(NoRedirects)


def call(method, path, body=None, headers=None):
    request = urllib.request.Request(base + path, data=body, method=method, headers=headers or {})
    try:
        with opener.open(request, timeout=30) as response:
            return response.status, response.headers, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read().decode()


def form(fields):
    return urllib.parse.urlencode(fields).encode()


admin = settings["admin_token"]
read_only = settings["read_only_token"]

# --- Refusals, over plain HTTP ---------------------------------------------------------------
status, headers, body = call("GET", "/console")
check(status == 303 and headers.get("Location") == "/console/session", f"a page without a session redirects to sign-in ({status})")
status, headers, body = call("GET", "/console/api/overview")
check(status == 401, f"the API without a session or token answers 401 ({status})")
check(all(app not in body for app in settings["expected"]), "the 401 names no app")
status, _, _ = call("GET", "/console/api/overview", headers={"Authorization": "Bearer not-an-admin-token-at-all"})
check(status == 401, f"the API with a wrong bearer token answers 401 ({status})")
status, _, body = call("POST", "/console/session", form({"token": "not-an-admin-token-at-all"}), {"Content-Type": "application/x-www-form-urlencoded"})
check(status == 401 and 'data-testid="sign-in-form"' in body, f"a wrong token is refused at sign-in ({status})")
status, _, body = call("GET", "/console/api/overview", headers={"Authorization": "Bearer " + admin})
check(status == 200 and json.loads(body)["apps"], f"the API takes a bearer admin token ({status})")
overview = json.loads(body)
for key in ["apps", "outbox", "credentials", "instances", "front_ends"]:
    check(key in overview, f"the overview has {key}")
front_ends = {front_end["name"]: front_end for front_end in overview.get("front_ends", [])}
check(list(front_ends) == ["matrix", "nextcloud", "gorush", "status"], f"the overview lists the four front ends ({list(front_ends)})")
matrix = front_ends.get("matrix", {}).get("figures", {})
check(front_ends.get("matrix", {}).get("configured") and matrix.get("notifies") == 1 and matrix.get("rejected_pushkeys") == 1,
      f"Matrix shows one notify request and one rejected pushkey ({matrix})")
gorush = front_ends.get("gorush", {}).get("figures", {})
_, _, stat_body = call("GET", "/api/stat/app")
stat = json.loads(stat_body)
expected_gorush = {"total_count": stat["total_count"], "submitted_tasks": stat["submitted_tasks"], "success_tasks": stat["success_tasks"],
                   "failure_tasks": stat["failure_tasks"]}
for platform in ["ios", "android", "huawei"]:
    for key in ["push_success", "push_error"]:
        expected_gorush[f"{platform}_{key}"] = stat[platform][key]
check(gorush == expected_gorush and gorush["ios_push_success"] == 2 and gorush["ios_push_error"] == 1,
      f"gorush shows the /api/stat/app figures ({gorush}, {stat})")
check(front_ends.get("nextcloud", {}).get("configured") is False, "Nextcloud, with no app, is not configured")
check(all(k in overview["apps"][0] for k in ["id", "type", "last_hour", "last_day", "outbox_pending"]), "each app has id, type, last_hour, last_day, outbox_pending")

# A session started over HTTP, for the CSRF and read-only refusals.
status, headers, _ = call("POST", "/console/session", form({"token": admin}), {"Content-Type": "application/x-www-form-urlencoded"})
cookie = headers.get("Set-Cookie", "")
check(status == 303 and headers.get("Location") == "/console", f"a valid token signs in and goes to the console ({status})")
for flag in ["HttpOnly", "SameSite=Strict", "Path=/console"]:
    check(flag in cookie, f"the session cookie has {flag}")
check("Secure" not in cookie, "the cookie is not Secure over plain HTTP without a trusted proxy")
session = cookie.split(";")[0]
check(len(session.split("=", 1)[1]) == 64, "the session id is 256 random bits (64 hex digits)")
status, _, _ = call("POST", "/console/api/test-push", json.dumps({"app": "demo.apns", "token": settings["test_token"], "alert": "x"}).encode(),
                    {"Cookie": session, "Content-Type": "application/json"})
check(status == 403, f"a test push without a CSRF token is refused ({status})")
status, _, _ = call("POST", "/console/test-push", form({"app": "demo.apns", "token": settings["test_token"], "alert": "x"}),
                    {"Cookie": session, "Content-Type": "application/x-www-form-urlencoded"})
check(status == 403, f"the test push form without a CSRF token is refused ({status})")
status, _, _ = call("POST", "/console/test-push", form({"app": "demo.apns", "token": settings["test_token"], "alert": "x", "csrf": "0" * 32}),
                    {"Cookie": session, "Content-Type": "application/x-www-form-urlencoded"})
check(status == 403, f"the test push form with a wrong CSRF token is refused ({status})")
status, _, _ = call("POST", "/console/api/test-push", json.dumps({"app": "demo.apns", "token": settings["test_token"], "alert": "x"}).encode(),
                    {"Authorization": "Bearer " + read_only, "Content-Type": "application/json"})
check(status == 403, f"a read-only token cannot send a test push ({status})")
status, headers, body = call("GET", "/console", headers={"Cookie": session})
check(status == 200, f"the session opens the console ({status})")
check("default-src 'self'" in headers.get("Content-Security-Policy", ""), "the page has a strict Content-Security-Policy")
check(headers.get("X-Frame-Options") == "DENY", "the page has X-Frame-Options: DENY")
check(headers.get("Referrer-Policy") == "no-referrer", "the page has Referrer-Policy: no-referrer")
check('data-testid="sandbox-banner"' not in body, "with admin tokens configured, the sandbox's banner is not shown")
check("<script>" not in body and " style=" not in body, "the page has no inline script or style")
pages.append(("console over HTTP", body))

# --- The browser ---------------------------------------------------------------------------
options = webdriver.ChromeOptions()
options.binary_location = settings.get("chromium", "/usr/bin/chromium")
for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1280,1700"]:
    options.add_argument(argument)
driver = webdriver.Chrome(service=Service(settings.get("chromedriver", "/usr/bin/chromedriver")), options=options)
driver.set_page_load_timeout(60)
wait = WebDriverWait(driver, 90, poll_frequency=0.25)


# --- Accessibility checks, run in the page ----------------------------------------------------
UNLABELLED = """
return Array.from(document.querySelectorAll('input, select, textarea, button')).filter(function (control) {
  if (control.type === 'hidden') return false;
  if (control.getAttribute('aria-label') || control.getAttribute('aria-labelledby')) return false;
  if (control.tagName === 'BUTTON') return control.textContent.trim() === '';
  if (control.closest('label')) return false;
  return !(control.id && document.querySelector('label[for="' + control.id + '"]'));
}).map(function (control) { return control.outerHTML.slice(0, 120); });
"""

# WCAG 2 contrast of every element's own text against the first opaque background behind it.
LOW_CONTRAST = """
function parse(colour) {
  var parts = colour.match(/[0-9.]+/g) || ['0', '0', '0', '0'];
  return {r: +parts[0], g: +parts[1], b: +parts[2], a: parts.length > 3 ? +parts[3] : 1};
}
function luminance(c) {
  var channel = function (v) { v = v / 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
  return 0.2126 * channel(c.r) + 0.7152 * channel(c.g) + 0.0722 * channel(c.b);
}
function background(element) {
  for (var node = element; node && node.nodeType === 1; node = node.parentElement) {
    var colour = parse(getComputedStyle(node).backgroundColor);
    if (colour.a > 0.5) return colour;
  }
  return {r: 255, g: 255, b: 255, a: 1};
}
var low = [];
document.querySelectorAll('body *').forEach(function (element) {
  var own = Array.from(element.childNodes).some(function (n) { return n.nodeType === 3 && n.textContent.trim() !== ''; });
  if (!own || element.closest('svg') || element.getClientRects().length === 0) return;
  var style = getComputedStyle(element);
  if (style.visibility === 'hidden' || style.display === 'none') return;
  var fg = luminance(parse(style.color)), bg = luminance(background(element));
  var ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
  if (ratio < 4.5) low.push(element.tagName.toLowerCase() + ' "' + element.textContent.trim().slice(0, 30) + '" ' + ratio.toFixed(2));
});
return low;
"""

# Whether the focused element shows it: an outline or a box shadow.
FOCUS_SHOWN = """
var style = getComputedStyle(document.activeElement);
var outline = style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0;
return outline || (style.boxShadow && style.boxShadow !== 'none');
"""


def check_accessible(name):
    unlabelled = driver.execute_script(UNLABELLED)
    check(not unlabelled, f"every form control of the {name} page has a label ({unlabelled})")
    low = driver.execute_script(LOW_CONTRAST)
    check(not low, f"all text of the {name} page has a contrast of 4.5:1 or more ({low[:5]})")


def tab_to(element_id, presses=80):
    """Presses Tab until the element with `element_id` has the focus; whether it got there."""
    for _ in range(presses):
        if driver.execute_script("return document.activeElement && document.activeElement.id") == element_id:
            return True
        ActionChains(driver).send_keys(Keys.TAB).perform()
    return driver.execute_script("return document.activeElement && document.activeElement.id") == element_id


def focused_test_id():
    return driver.execute_script("var e = document.activeElement; return e ? (e.getAttribute('type') || '') + ':' + e.textContent.trim() : ''")


def row_counts(app):
    row = driver.find_element(By.CSS_SELECTOR, f'[data-testid="app-row"][data-app-id="{app}"]')
    return {outcome: int(row.find_element(By.CSS_SELECTOR, f'[data-testid="count-{outcome.replace("_", "-")}"]').text)
            for outcome in ["delivered", "invalid_token", "retry_later", "rejected"]}


try:
    driver.get(base + "/console")
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, '[data-testid="sign-in-form"]'))
    check(driver.current_url.endswith("/console/session"), "the browser is sent to the sign-in page")
    driver.save_screenshot(os.path.join(output, "1-sign-in.png"))
    pages.append(("sign-in", driver.page_source))
    check_accessible("sign-in")
    # Signing in with the keyboard alone: Tab to the token, type it, Enter.
    check(tab_to("token"), "Tab reaches the sign-in form's token field")
    check(driver.execute_script(FOCUS_SHOWN), "the focused token field shows its focus (outline or shadow)")
    ActionChains(driver).send_keys(admin).perform()
    ActionChains(driver).send_keys(Keys.TAB).perform()
    check(driver.execute_script(FOCUS_SHOWN) and focused_test_id() == "submit:Sign in", f"Tab then reaches the Sign in button, its focus shown ({focused_test_id()})")
    ActionChains(driver).send_keys(Keys.ENTER).perform()
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, '[data-testid="app-row"]'))
    check(True, "the sign-in form is submitted with the keyboard alone")
    cookies = {c["name"]: c for c in driver.get_cookies()}
    browser_cookie = cookies.get("pushgate_console", {})
    check(browser_cookie.get("httpOnly") is True, "the browser's cookie is HttpOnly")
    check(browser_cookie.get("sameSite") == "Strict", "the browser's cookie is SameSite=Strict")
    check(browser_cookie.get("path") == "/console", "the browser's cookie has Path=/console")

    # Each row's counts equal what was sent; the script refreshes them every 5 s, so wait for them.
    expected = settings["expected"]

    def counts_match(_):
        try:
            return all(row_counts(app) == counts for app, counts in expected.items())
        except Exception:
            return False

    try:
        wait.until(counts_match)
    except Exception:
        pass
    for app, counts in expected.items():
        shown = row_counts(app)
        check(shown == counts, f"{app}'s row shows {counts} (shows {shown})")
    provider = settled(lambda: driver.find_element(By.CSS_SELECTOR, '[data-app-id="demo.apns"] [data-testid="provider-state"]').text)
    check("p50 " in provider and "p99 " in provider and "circuit closed" in provider, f"the provider's latency and circuit are shown ({provider})")
    web_provider = settled(lambda: driver.find_element(By.CSS_SELECTOR, '[data-app-id="demo.webpush"] [data-testid="provider-state"]').text)
    check("circuits per push service" in web_provider and "circuit closed" not in web_provider,
          f"a Web Push app's circuits are per push service, not one that always reads closed ({web_provider})")
    wait.until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-refreshed"))
    check(True, "the script refreshed the figures from the API")
    def delivered_points():
        lines = driver.find_elements(By.CSS_SELECTOR, '[data-testid="chart"] polyline[data-outcome="delivered"]')
        return lines[0].get_attribute("points").split() if lines else []
    points = settled(delivered_points)
    check(len(points) == 60, f"the chart has a point for each of the last 60 minutes ({len(points)})")
    check(any(int(p.split(",")[1]) < 160 for p in points), "the chart's delivered line rises above zero")
    driver.save_screenshot(os.path.join(output, "2-overview.png"))
    pages.append(("overview", driver.page_source))

    check_accessible("overview")
    shown = {e.get_attribute("data-front-end") for e in driver.find_elements(By.CSS_SELECTOR, '[data-testid="front-end"]')}
    check(shown == {"matrix", "nextcloud", "gorush", "status"}, f"the page has a section for each front end ({shown})")
    check(driver.find_element(By.CSS_SELECTOR, '[data-testid="fe-nextcloud-state"]').text == "not configured", "the page shows Nextcloud as not configured")
    check(driver.find_element(By.CSS_SELECTOR, '[data-testid="fe-gorush-total_count"]').text == str(stat["total_count"]),
          "the page shows gorush's total_count")
    # The script rewrites every front end's figure from the API, in the page's own form (a time with a space
    # between date and time of day, "never" for none): marked stale here, each is written again.
    driver.execute_script("""
        document.querySelectorAll('[data-testid="front-end"] dd[data-testid^="fe-"]').forEach(function (e) { e.textContent = "stale"; });
        document.body.removeAttribute("data-refreshed");""")
    wait.until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-refreshed"))
    figures = settled(lambda: {e.get_attribute("data-testid"): e.text
                               for e in driver.find_elements(By.CSS_SELECTOR, '[data-testid="front-end"] dd[data-testid^="fe-"]')})
    check(figures and "stale" not in figures.values(), f"the script rewrote every front end's figure ({figures})")
    check(not any(re.match(r"^\d{4}-\d\d-\d\dT", text) for text in figures.values()),
          f"the script writes times as the page does ({figures})")

    # The store stops answering: the API says so in `problem`, its counts zero. The page keeps the counts
    # it shows (unknown now, not zero), shows the problem and the store as not answering; a refresh that
    # fails says the figures are old; once the API answers again, the banner goes.
    before = settled(lambda: row_counts("demo.apns"))
    driver.execute_script("""
        window.realFetch = window.fetch;
        window.fetch = function (url, options) {
          return window.realFetch(url, options).then(function (response) { return response.json(); }).then(function (overview) {
            overview.problem = "The store did not answer (simulated outage)";
            overview.gateway.store_healthy = false;
            (overview.apps || []).forEach(function (app) {
              Object.keys(app.last_hour).forEach(function (outcome) { app.last_hour[outcome] = 0; });
              app.outbox_pending = 0;
            });
            return new Response(JSON.stringify(overview), { status: 200, headers: { "Content-Type": "application/json" } });
          });
        };""")
    problem = lambda: driver.find_element(By.CSS_SELECTOR, '[data-testid="problem"]')
    wait.until(lambda d: settled(lambda: problem().is_displayed() and "simulated outage" in problem().text))
    check(True, "a store outage the API reports is shown in the banner")
    check(settled(lambda: row_counts("demo.apns")) == before, f"the counts shown stay, not zeros ({row_counts('demo.apns')} against {before})")
    check("not answering" in driver.find_element(By.CSS_SELECTOR, '[data-testid="gateway-store"]').text, "the store is shown as not answering")
    driver.execute_script("window.fetch = function () { return Promise.resolve(new Response('', { status: 503 })); };")
    wait.until(lambda d: settled(lambda: "could not be refreshed (HTTP 503)" in problem().text))
    check(True, "a refresh that fails says the figures shown are old")
    driver.execute_script("window.fetch = window.realFetch;")
    wait.until(lambda d: settled(lambda: not problem().is_displayed()))
    check("answering" in driver.find_element(By.CSS_SELECTOR, '[data-testid="gateway-store"]').text
          and "not answering" not in driver.find_element(By.CSS_SELECTOR, '[data-testid="gateway-store"]').text,
          "the banner goes and the store is answering again once the API answers")

    # A reload of the configuration that adds an app (simulated: the API's answer gains an app and a new
    # generation): the page is loaded again, so its table and the test push's list are the server's new
    # ones; the server's real answer then matches the page, and it is not loaded again.
    driver.execute_script("""
        window.pushgateBeforeReload = true;
        window.realFetch = window.fetch;
        window.fetch = function (url, options) {
          return window.realFetch(url, options).then(function (response) { return response.json(); }).then(function (overview) {
            overview.gateway.configuration_generation += 1;
            overview.apps.push(JSON.parse(JSON.stringify(overview.apps[0])));
            overview.apps[overview.apps.length - 1].id = "added.by.reload";
            return new Response(JSON.stringify(overview), { status: 200, headers: { "Content-Type": "application/json" } });
          });
        };""")
    wait.until(lambda d: settled(lambda: d.execute_script("return window.pushgateBeforeReload") is None
                                 and d.find_element(By.TAG_NAME, "body").get_attribute("data-refreshed")))
    check(True, "an overview with other apps of a new configuration generation loads the page again")
    loaded = driver.execute_script("window.pushgateAfterReload = true; return document.body.getAttribute('data-refreshed');")
    wait.until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-refreshed") != loaded)
    check(driver.execute_script("return window.pushgateAfterReload") is True, "the server's own answer does not load the page again")

    # A test push, filled and sent with the keyboard alone, reaches the sandbox's emulator, and its outcome is shown.
    check(tab_to("test-app"), "Tab reaches the test push form's app")
    check(driver.execute_script(FOCUS_SHOWN), "the focused app list shows its focus")
    ActionChains(driver).send_keys(Keys.HOME).perform()
    for _ in range(20):
        if driver.execute_script("return document.activeElement.value") == settings["test_app"]:
            break
        ActionChains(driver).send_keys(Keys.ARROW_DOWN).perform()
    check(driver.find_element(By.ID, "test-app").get_attribute("value") == settings["test_app"], "the arrow keys choose the app")
    ActionChains(driver).send_keys(Keys.TAB).perform()
    check(driver.execute_script("return document.activeElement.id") == "test-token" and driver.execute_script(FOCUS_SHOWN),
          "Tab then reaches the token, its focus shown")
    ActionChains(driver).send_keys(settings["test_token"]).send_keys(Keys.TAB).perform()
    check(driver.execute_script("return document.activeElement.id") == "test-alert", "Tab then reaches the alert text")
    ActionChains(driver).send_keys(settings["test_alert"]).send_keys(Keys.TAB).perform()
    check(driver.execute_script(FOCUS_SHOWN) and focused_test_id() == "submit:Send test push", f"Tab then reaches the send button, its focus shown ({focused_test_id()})")
    ActionChains(driver).send_keys(Keys.ENTER).perform()
    result = wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, '[data-testid="test-push-result"]'))[0]
    check(result.get_attribute("data-outcome") == "delivered", f"the test push is delivered ({result.text})")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", result)
    driver.save_screenshot(os.path.join(output, "3-test-push.png"))
    pages.append(("test push result", driver.page_source))
    check_accessible("test push result")
    deadline = time.monotonic() + 60
    reached = False
    while time.monotonic() < deadline and not reached:
        _, _, deliveries = call("GET", "/sandbox/deliveries")
        reached = settings["test_token"] in deliveries
        if not reached:
            time.sleep(0.2)
    check(reached, "the test push reached the sandbox's emulator")

    # Readable on a phone.
    driver.set_window_size(390, 844)
    driver.get(base + "/console")
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, '[data-testid="app-row"]'))
    driver.save_screenshot(os.path.join(output, "4-phone.png"))
    width = driver.execute_script("return document.documentElement.scrollWidth")
    check(width <= 400, f"the page fits a phone's width ({width} px)")
    # A wide table scrolls sideways, but what its caption says is readable without scrolling.
    clipped = driver.execute_script(
        "return [...document.querySelectorAll('caption')]"
        ".filter(c => c.getBoundingClientRect().right > "
        "Math.min(document.documentElement.clientWidth, (c.closest('.scroll') || c).getBoundingClientRect().right) + 0.5)"
        ".map(c => c.textContent.trim().slice(0, 40))"
    )
    check(clipped == [], f"every table caption fits a phone's width (cut off: {clipped})")
    pages.append(("phone", driver.page_source))

    # Signing out ends the session.
    driver.find_element(By.CSS_SELECTOR, '[data-testid="sign-out"]').click()
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, '[data-testid="sign-in-form"]'))
    driver.get(base + "/console")
    check(driver.find_elements(By.CSS_SELECTOR, '[data-testid="sign-in-form"]') != [], "after sign-out the console asks to sign in again")

    # The read-only token signs in but has no test push form.
    driver.find_element(By.NAME, "token").send_keys(read_only)
    driver.find_element(By.CSS_SELECTOR, '[data-testid="sign-in-form"] button[type="submit"]').click()
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, '[data-testid="app-row"]'))
    check(driver.find_elements(By.CSS_SELECTOR, '[data-testid="test-push-form"]') == [], "a read-only session has no test push form")
    pages.append(("read-only", driver.page_source))
finally:
    driver.quit()

# Failed sign-ins are limited per client address (checked last: it shuts this address out for minutes).
statuses = [call("POST", "/console/session", form({"token": f"wrong-token-{n}"}), {"Content-Type": "application/x-www-form-urlencoded"})[0]
            for n in range(6)]
check(statuses[-1] == 429, f"repeated failed sign-ins are refused with 429 ({statuses})")
status, _, _ = call("POST", "/console/session", form({"token": admin}), {"Content-Type": "application/x-www-form-urlencoded"})
check(status == 429, f"once limited, the address waits even with the right token ({status})")

_, _, api = call("GET", "/console/api/overview", headers={"Authorization": "Bearer " + admin})
pages.append(("API overview", api))
for name, html in pages:
    leaked = [secret for secret in settings["secrets"] if secret in html]
    check(not leaked, f"no token or notification text in the {name} page ({len(leaked)} found)")

print(json.dumps({"failures": failures}))
sys.exit(1 if failures else 0)
