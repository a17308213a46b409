"""The owner's console over real HTTP (httpx against a running server): sign-in,
sessions, CSRF, throttling, inert note rendering, proposals, activity, guests.

The proposal and guest tests use a real redis-server (guestkit); the rest run
on the plain server, where the queue is unavailable and the console says so.
"""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from consolekit import EVIL, active_markup, csrf_of, owner, signin
from reliakit import post_initialize
from serverkit import TOKEN, RunningServer, make_settings
from vaultkit import push_from_clone

from cortex.app.server import assemble, make_app
from cortex.brain.trailers import Actor
from cortex.http.console.auth import Sessions, Signer, Throttle, credential_ok
from cortex.http.console.markdown import link_allowed, render_markdown

OWNER = Actor(door="owner", tool="brain_write", client="test")
PAGES = [
    "/console/proposals",
    "/console/activity",
    "/console/notes",
    "/console/note/profile.md",
    "/console/guests",
    "/console/status",
    "/console/search?q=profile",
]


@pytest.fixture
def passcode_server(tmp_path: Path, brain_path: Path):
    parts = assemble(make_settings(tmp_path, brain_path, env={"CORTEX_CONSOLE_PASSCODE": "correct horse battery"}))
    with RunningServer(make_app(parts), parts.settings) as running:
        running.parts = parts
        yield running


# -- pure parts ---------------------------------------------------------------


@pytest.mark.parametrize(
    "url,ok",
    [
        ("https://example.org", True),
        ("http://x", True),
        ("mailto:a@b.c", True),
        ("notes/x.md", True),
        ("../x.md", True),
        ("#h", True),
        ("?q=1", True),
        ("//host/x", True),
        ("a/b:c", True),
        ("javascript:alert(1)", False),
        ("JAVASCRIPT:alert(1)", False),
        (" javascript:x", False),
        ("java\tscript:x", False),
        ("java\nscript:x", False),
        ("vbscript:x", False),
        ("data:text/html,x", False),
        ("data:image/png;base64,AAA", False),
        ("file:///etc/passwd", False),
        ("ftp://x", False),
        ("x:y", False),
    ],
)
def test_link_allow_list(url, ok):
    assert link_allowed(url) is ok


def test_markdown_renders_inert_and_redacted():
    html = render_markdown(EVIL)
    assert active_markup(html) == []
    assert "<script" not in html and '<img src="x"' not in html and "<svg" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html  # shown as text, not dropped
    assert '<a href="https://example.org/x" rel="nofollow noopener noreferrer">ok</a>' in html
    assert 'href="mailto:owner@example.org"' in html and 'href="other.md"' in html
    assert "sk-ant-" not in html and "[REDACTED API key]" in html


def test_sessions_signed_bound_expiring_and_revocable():
    now = [1_000_000.0]
    sessions = Sessions(Signer("k" * 32), ["token", ""], clock=lambda: now[0])
    session, cookie = sessions.new()
    assert sessions.read(cookie) == session
    body, mac = cookie.rsplit(".", 1)
    assert sessions.read(body + "." + mac[::-1]) is None  # forged signature
    assert sessions.read(cookie + "x") is None
    assert Sessions(Signer("other-key" * 4), ["token", ""]).read(cookie) is None
    assert Sessions(Signer("k" * 32), ["rotated", ""], clock=lambda: now[0]).read(cookie) is None
    sessions.revoke(session)
    assert sessions.read(cookie) is None
    _, fresh = sessions.new()
    now[0] += 13 * 3600
    assert sessions.read(fresh) is None  # expired


def test_throttle_window():
    now = [0.0]
    t = Throttle(clock=lambda: now[0])
    for _ in range(5):
        assert t.retry_after("1.2.3.4") is None
        t.fail("1.2.3.4")
    assert t.retry_after("1.2.3.4") is not None
    assert t.retry_after("5.6.7.8") is None  # per address
    now[0] += 301
    assert t.retry_after("1.2.3.4") is None  # the window passed


def test_credentials_compare_both():
    assert credential_ok("tok", "tok", None) and credential_ok("pass", "tok", "pass")
    assert not credential_ok("", "tok", None) and not credential_ok("tok2", "tok", "pass")


# -- sign-in, sessions, CSRF --------------------------------------------------------


@pytest.mark.slow
def test_pages_need_a_session_and_send_security_headers(server):
    c = httpx.Client(base_url=server.url, follow_redirects=False)
    for page in PAGES + ["/console", "/console/commit/" + server.parts.brain.store.head()]:
        r = c.get(page)
        assert r.status_code == 303 and r.headers["location"] == "/console/signin", page
    r = c.get("/console/signin")
    assert r.status_code == 200 and '<meta name="viewport"' in r.text
    csp = r.headers["content-security-policy"]
    assert "default-src 'self'" in csp and "script-src 'none'" in csp and "style-src 'self' 'unsafe-inline'" in csp
    assert r.headers["x-frame-options"] == "DENY" and r.headers["referrer-policy"] == "no-referrer"
    signed = owner(server.url)
    for page in PAGES:
        r = signed.get(page)
        assert r.status_code == 200, page
        assert r.headers["content-security-policy"] == csp and r.headers["x-frame-options"] == "DENY"
        assert "<script" not in r.text


@pytest.mark.slow
def test_sign_in_sets_a_strict_httponly_cookie_and_sign_out_ends_it(server):
    c, r = signin(server.url)
    assert r.status_code == 303
    cookie = next(v for v in r.headers.get_list("set-cookie") if v.startswith("cortex_console="))
    flags = [f.strip().lower() for f in cookie.split(";")]
    assert "httponly" in flags and "samesite=strict" in flags and "path=/console" in flags
    assert "secure" not in flags  # plain http here; https requests get Secure
    assert c.get("/console/proposals").status_code == 200
    value = c.cookies.get("cortex_console")
    out = c.post("/console/signout", data={"csrf": csrf_of(c.get("/console/guests").text)})
    assert out.status_code == 303 and out.headers["location"] == "/console/signin"
    # The old cookie replayed after sign-out is refused.
    replay = httpx.get(f"{server.url}/console/proposals", cookies={"cortex_console": value})
    assert replay.status_code == 303


@pytest.mark.slow
def test_secure_flag_on_https(tmp_path, brain_path):
    # A local TLS proxy named in CORTEX_TRUSTED_PROXIES: its X-Forwarded-Proto makes the request https.
    parts = assemble(make_settings(tmp_path, brain_path, env={"CORTEX_TRUSTED_PROXIES": "127.0.0.1"}))
    with RunningServer(make_app(parts), parts.settings) as running:
        c = httpx.Client(base_url=running.url, headers={"X-Forwarded-Proto": "https"})
        r = c.get("/console/signin")
        assert "secure" in [f.strip().lower() for f in r.headers["set-cookie"].split(";")]


@pytest.mark.slow
def test_wrong_token_then_throttled(server):
    for _ in range(5):
        _, r = signin(server.url, "not-the-token")
        assert r.status_code == 401 and "not the owner token" in r.text
        assert "cortex_console=" not in r.headers.get("set-cookie", "").replace("cortex_console_pre", "")
    _, r = signin(server.url, "still-wrong")
    assert r.status_code == 429 and int(r.headers["retry-after"]) > 0
    assert "from this address" in r.text and "The owner token still signs in" in r.text
    assert r.headers["content-security-policy"].startswith("default-src 'self'")
    _, r = signin(server.url, TOKEN)  # the owner token is never locked out
    assert r.status_code == 303


@pytest.mark.slow
def test_passcode_signs_in_too(passcode_server):
    _, r = signin(passcode_server.url, "correct horse battery")
    assert r.status_code == 303
    _, r = signin(passcode_server.url, TOKEN)
    assert r.status_code == 303
    _, r = signin(passcode_server.url, "correct horse ")
    assert r.status_code == 401


@pytest.mark.slow
def test_posts_without_the_csrf_token_are_refused(server):
    store = server.parts.brain.store
    head = store.head()
    anon = httpx.Client(base_url=server.url)
    anon.get("/console/signin")
    assert anon.post("/console/signin", data={"secret": TOKEN}).status_code == 403  # no token
    assert anon.post("/console/signin", data={"secret": TOKEN, "csrf": "x"}).status_code == 403
    c = owner(server.url)
    add = {"name": "mallory", "scopes": "notes/"}
    r = c.post("/console/guests/add", data=add)
    assert r.status_code == 403 and "CSRF" in r.text
    assert c.post("/console/guests/add", data={**add, "csrf": "forged"}).status_code == 403
    assert c.post("/console/signout", data={}).status_code == 403
    # Another session's token does not fit this session.
    other = owner(server.url)
    foreign = csrf_of(other.get("/console/guests").text)
    assert c.post("/console/guests/add", data={**add, "csrf": foreign}).status_code == 403
    # A cross-site Origin is refused even with the right token.
    token = csrf_of(c.get("/console/guests").text)
    r = c.post("/console/guests/add", data={**add, "csrf": token}, headers={"Origin": "http://evil.example"})
    assert r.status_code == 403
    assert store.head() == head  # nothing was committed
    assert c.get("/console/proposals").status_code == 200  # still signed in


@pytest.mark.slow
def test_unknown_host_is_refused(server):
    r = httpx.get(f"{server.url}/console/signin", headers={"Host": "evil.example"})
    assert r.status_code == 421


# -- notes ---------------------------------------------------------------------


@pytest.mark.slow
def test_a_note_of_brackets_or_links_renders_a_bounded_part_and_says_so(server):
    """Issue 42: a 400 KB note of brackets took 15.9 s to render, 150,000 links 10.5 MB of HTML."""
    brain = server.parts.brain
    brain.write("notes/brackets.md", "create", OWNER, content="[" * 400_000)
    links = "\n".join(f"- [x{i}](https://e.org/{i})" for i in range(20_000))
    brain.write("notes/links.md", "create", OWNER, content=links)
    c = owner(server.url)
    for path, total in [("notes/brackets.md", 400_000), ("notes/links.md", len(links))]:
        r = c.get(f"/console/note/{path}")
        assert r.status_code == 200
        said = re.search(r"Rendered the first ([\d,]+) of ([\d,]+) characters", r.text)
        assert said and int(said[2].replace(",", "")) == total, r.text[:300]
        body = r.text.split('<article class="note-body', 1)[1].split("</article>", 1)[0]
        assert body.count("<a ") <= 5000 and len(body) < 600_000


@pytest.mark.slow
def test_note_with_script_markup_renders_inert(server):
    brain = server.parts.brain
    brain.write("notes/evil.md", "create", OWNER, content=EVIL)
    c = owner(server.url)
    r = c.get("/console/note/notes/evil.md")
    assert r.status_code == 200
    assert active_markup(r.text) == []
    assert "<script" not in r.text.lower()
    assert not re.search(r"<[^>]*\son\w+\s*=", r.text)  # no event handler attribute
    assert not re.search(r"(href|src)\s*=\s*[\"']?\s*javascript:", r.text, re.I)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in r.text  # visible as text
    assert "sk-ant-" not in r.text and "[REDACTED API key]" in r.text  # redacted, source view too
    assert 'href="other.md"' in r.text  # relative links stay, resolved against the note's folder


@pytest.mark.slow
def test_notes_browse_status_frontmatter_and_history(server):
    brain = server.parts.brain
    brain.write(
        "notes/old-plan.md",
        "create",
        OWNER,
        content=(
            "---\ntitle: Old plan\nstatus: superseded\nsuperseded_by: notes/new-plan.md\ntags: [plans, q1]\n---\n"
            "# Old plan\n\nWe ship in **March**.\n"
        ),
    )
    brain.write("notes/new-plan.md", "create", OWNER, content="# New plan\n\nWe ship in April.\n")
    brain.write("notes/old-plan.md", "append", OWNER, content="Kept for the record.\n")
    c = owner(server.url)
    top = c.get("/console/notes")
    assert 'href="/console/notes?dir=notes/"' in top.text
    folder = c.get("/console/notes", params={"dir": "notes/"})
    assert "old-plan.md" in folder.text and "status: superseded" in folder.text
    r = c.get("/console/note/notes/old-plan.md")
    assert "Retired: status: superseded" in r.text
    assert 'href="/console/note/notes/new-plan.md"' in r.text
    assert "<strong>March</strong>" in r.text
    assert re.search(r"<th class=\"mono\">tags</th><td>plans, q1</td>", r.text)
    assert r.text.count("/console/commit/") >= 3  # its own history: two writes (+ the status link)
    assert c.get("/console/note/notes/missing.md").status_code == 404
    assert c.get("/console/note/../etc/passwd").status_code in (404, 400)
    assert c.get("/console/notes", params={"dir": "../x"}).status_code == 404


# -- activity ------------------------------------------------------------------


@pytest.mark.slow
def test_activity_shows_doors_hand_made_commits_and_filters(server, tmp_path):

    brain = server.parts.brain
    brain.write("notes/a.md", "create", OWNER, content="# A\n\nalpha line\n")
    brain.write(
        "projects/b.md", "create", Actor(door="owner-url", tool="brain_write", client="connector 1"), content="# B\n"
    )
    # A hand-made commit: pushed from a clone by a person, no Cortex trailers.
    push_from_clone(
        brain, tmp_path, lambda clone: (clone / "notes/a.md").write_text("# A\n\nbeta line\n"), "fix typo by hand"
    )
    c = owner(server.url)
    page = c.get("/console/activity").text
    assert "fix typo by hand" in page and "hand-made" in page
    assert "owner-url" in page and "connector 1" in page and "brain_write" in page
    only_hand = c.get("/console/activity", params={"door": "hand-made"}).text
    assert "fix typo by hand" in only_hand and "create projects/b.md" not in only_hand
    only_url = c.get("/console/activity", params={"door": "owner-url"}).text
    assert "create projects/b.md" in only_url and "fix typo by hand" not in only_url
    by_path = c.get("/console/activity", params={"path": "projects/"}).text
    assert "create projects/b.md" in by_path and "create notes/a.md" not in by_path
    assert c.get("/console/activity", params={"before": "zzz"}).status_code == 200  # an error line, no crash
    # The hand-made commit's diff page: coloured rows, redaction applies there too.
    head = brain.store.head()
    assert f"/console/commit/{head}" in page
    diff = c.get(f"/console/commit/{head}").text
    assert '<span class="del">-alpha line</span>' in diff and '<span class="add">+beta line</span>' in diff
    assert c.get(f"/console/commit/{head[:12]}").status_code == 200
    assert c.get("/console/commit/" + "0" * 40).status_code == 404
    assert c.get("/console/commit/not-a-sha").status_code == 404
    # Cortex's own first commit: the same label on the console and in brain_history.
    from serverkit import call

    first = call(server.url + "/mcp", "brain_history", limit=100).data["commits"][-1]
    assert first["door"] == "cortex" and first["subject"] == "init: brain from template"
    only_cortex = c.get("/console/activity", params={"door": "cortex"}).text
    assert "init: brain from template" in only_cortex and "fix typo by hand" not in only_cortex


# -- proposals (real Redis) -------------------------------------------------------


@pytest.mark.slow
def test_proposals_page_says_when_the_queue_is_unavailable(server):
    c = owner(server.url)
    r = c.get("/console/proposals")
    assert r.status_code == 200 and "queue is unavailable" in r.text
    g = c.get("/console/guests")
    assert g.status_code == 200 and "meters are unavailable" in g.text


@pytest.mark.slow
def test_accept_and_reject_from_the_console(gserver):
    brain, q = gserver.brain, gserver.queue
    brain.write("notes/public/garden.md", "create", OWNER, content="# Garden\n\nWater at dawn.\n")
    gserver.guest("alice", ["notes/public/"])
    keep, _ = q.admit("alice", "notes/public/garden.md", "append", "Also mulch in May.\n", "seasonal tip", 10)
    drop, _ = q.admit(
        "alice", "notes/public/spam.md", "create", "<script>alert(1)</script>\nBuy now\n", "<b>promo</b>", 10
    )
    c = owner(gserver.url)
    page = c.get("/console/proposals").text
    assert keep.id in page and drop.id in page and "alice" in page and "seasonal tip" in page
    assert '<span class="add">+Also mulch in May.</span>' in page
    assert '<span class="ctx"> Water at dawn.</span>' in page
    assert active_markup(page) == [] and "&lt;b&gt;promo&lt;/b&gt;" in page
    token = csrf_of(page)

    r = c.post(f"/console/proposals/{keep.id}/accept", data={"csrf": token})
    # Accept lands back on the queue, which says what was accepted and lists what is left.
    assert r.status_code == 303 and r.headers["location"] == f"/console/proposals?accepted={keep.id}"
    done = c.get(r.headers["location"]).text
    head = brain.store.head()
    assert re.search(rf'id="outcome">Accepted <span class="mono">{keep.id}</span> from guest', done), done
    assert f"/console/commit/{head}" in done and "notes/public/garden.md" in done
    assert f'<article class="card" id="{drop.id}">' in done and f'<article class="card" id="{keep.id}">' not in done
    # What it says is read from the queue: a pending, an unknown or a made-up id says nothing.
    for pid in (drop.id, "p_0123456789abcdef", "<b>x</b>"):
        assert 'id="outcome"' not in c.get("/console/proposals", params={"accepted": pid}).text
    assert "Accepted in commit" in c.get(f"/console/proposals/{keep.id}").text
    assert "Also mulch in May." in brain.read("notes/public/garden.md")[2].text
    activity = c.get("/console/activity", params={"door": "console"}).text
    assert head[:12] in activity and "console_accept" in activity

    assert c.post(f"/console/proposals/{drop.id}/reject", data={"csrf": token, "reason": ""}).status_code == 409
    r = c.post(f"/console/proposals/{drop.id}/reject", data={"csrf": token, "reason": "spam, not a note"})
    assert r.status_code == 303
    done = c.get(r.headers["location"]).text
    assert "Rejected: spam, not a note" in done and ".cortex/tombstones/" in done
    assert brain.store.head() in done
    assert keep.id not in c.get("/console/proposals").text  # decided ones leave the queue
    # A refused accept (create over an existing note) shows why and changes nothing.
    clash, _ = q.admit("alice", "notes/public/garden.md", "create", "# Other\n", "", 10)
    before = brain.store.head()
    r = c.post(f"/console/proposals/{clash.id}/accept", data={"csrf": token})
    assert r.status_code == 409 and "already exists" in r.text and brain.store.head() == before


# -- guests (real Redis) ------------------------------------------------------------


@pytest.mark.slow
def test_guests_add_shows_the_door_once_meters_and_revoke(gserver):
    c = owner(gserver.url)
    token = csrf_of(c.get("/console/guests").text)
    r = c.post(
        "/console/guests/add",
        data={
            "csrf": token,
            "name": "bob",
            "scopes": "notes/public/\nprofile.md",
            "max_k": "3",
            "daily_asks": "7",
            "daily_proposals": "2",
        },
    )
    assert r.status_code == 200 and "Shown once" in r.text
    door = re.search(r"/g/([A-Za-z0-9_-]{20,})/mcp", r.text)
    assert door
    secret = door.group(1)
    assert post_initialize(f"{gserver.url}/g/{secret}/mcp", {}).status_code == 200
    gserver.queue.take("asks", "bob", 7)
    listing = c.get("/console/guests").text
    assert "bob" in listing and secret not in listing
    assert "asks 1 / 7" in listing and "proposals 0 / 2" in listing and "notes/public/" in listing
    bad = c.post("/console/guests/add", data={"csrf": token, "name": "Bad Name!", "scopes": "notes/"})
    assert bad.status_code == 400 and "Guest not added" in bad.text
    dup = c.post("/console/guests/add", data={"csrf": token, "name": "bob", "scopes": "notes/"})
    assert dup.status_code == 400 and "already exists" in dup.text
    r = c.post("/console/guests/bob/revoke", data={"csrf": token})
    assert r.status_code == 200 and "revoked in commit" in r.text
    assert post_initialize(f"{gserver.url}/g/{secret}/mcp", {}).status_code == 404


@pytest.mark.slow
def test_a_redis_outage_is_reported_not_a_crash(gserver):
    gserver.guest("alice", ["notes/public/"])
    c = owner(gserver.url)
    token = csrf_of(c.get("/console/proposals").text)
    gserver.redis.stop()
    r = c.get("/console/proposals")
    assert r.status_code == 200 and "queue is unavailable" in r.text
    g = c.get("/console/guests")
    assert g.status_code == 200 and "meters are unavailable" in g.text and "alice" in g.text
    r = c.post("/console/proposals/p_0123456789abcdef/accept", data={"csrf": token})
    assert r.status_code == 409 and "queue unavailable" in r.text


@pytest.mark.slow
def test_form_posts_need_a_content_length(server):
    c = owner(server.url)
    token = csrf_of(c.get("/console/guests").text)

    def chunks():
        yield f"csrf={token}&name=x&scopes=notes/".encode()

    r = c.post("/console/guests/add", content=chunks(), headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert r.status_code == 411


def test_the_console_reads_markdown_as_the_verifier_does_and_shows_hidden_text_as_hidden():
    """One reading: a comment is an HTML token, shown escaped and marked hidden, so a
    proposal cannot hide text from the owner's review; a fence inside a longer fence is code."""
    html = render_markdown("a <!-- inline note --> b\n\n<!--\nblock comment\n-->\n\n````\n```\n# not a heading\n````\n")
    assert html.count('class="md-hidden"') == 2
    assert "&lt;!-- inline note --&gt;" in html and "block comment" in html
    assert "<!--" not in html and "<h1>" not in html
    heading = render_markdown("Old plan (DEPRECATED)\n===\n")
    assert '<h1 class="md-retired"' in heading and heading.endswith(">Old plan (DEPRECATED)</h1>\n")


@pytest.mark.slow
def test_search_reflects_a_hostile_query_as_text_and_refuses_bad_input(server):
    c = owner(server.url)
    r = c.get("/console/search", params={"q": "<script>alert(1)</script> profile", "prefix": ""})
    assert r.status_code == 200 and active_markup(r.text) == []
    assert "&lt;script&gt;alert(1)&lt;/script&gt; profile" in r.text
    r = c.get("/console/search", params={"q": "profile", "prefix": "notes/\x00"})
    assert r.status_code == 400 and "Not searched:" in r.text
