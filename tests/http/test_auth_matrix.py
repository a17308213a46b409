"""Every route x (no credential, a wrong one, the right one, another door's) -> the
expected status, and no secret in any log.

The routes come from the running app itself, so a route added later without an
entry here fails `test_every_route_is_in_the_matrix` instead of going untested.
One server carries every door: owner bearer, URL secret, a guest (real Redis),
the console, and the push webhook (hosted mode on a local bare remote).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
from dataclasses import dataclass

import httpx
import pytest
from guestkit import need_redis
from reliakit import ServeProcess, md_cell, post_initialize, write_section
from serverkit import TOKEN, URL_SECRET, RunningServer, call, make_settings

from cortex.app.brain_setup import init_brain
from cortex.app.server import assemble, make_app
from cortex.guests.policy import add_guest
from cortex.guests.redis_process import redis_server_binary
from cortex.http.doors import OAUTH_PATHS

pytestmark = pytest.mark.slow  # every test here takes 0.3 s or more

HOOK_SECRET = "webhook-secret-for-tests-5550123"
NOTE_CREDENTIAL = "sk-ant-api03-" + "N0te5ecret" * 5
AWS_KEY = "AKIA" + "Q" * 16
REMOTE_TOKEN = "ghp_" + "R3moteT0ken" * 3  # a Git host token (unused by a local remote, must not print)
CSRF = re.compile(r'name="csrf" value="([^"]+)"')


def sign(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def console_signin(base: str, secret: str) -> tuple[httpx.Client, httpx.Response]:
    """Open the sign-in form, post `secret`; the client keeps whatever cookie it got."""
    c = httpx.Client(base_url=base, follow_redirects=False, timeout=30)
    form = c.get("/console/signin")
    m = CSRF.search(form.text)
    assert form.status_code == 200 and m, form.status_code
    return c, c.post("/console/signin", data={"csrf": m.group(1), "secret": secret})


@dataclass
class World:
    url: str
    parts: object
    guest_secret: str
    route_paths: list[str]


@pytest.fixture
def world(tmp_path, redis_proc):
    """A hosted server (local bare remote) with Redis, a guest, the console and the webhook."""
    remote = tmp_path / "remote.git"
    init_brain(remote, bare=True)
    settings = make_settings(
        tmp_path,
        tmp_path / "unused",
        env={
            "REDIS_URL": redis_proc.url,
            "CORTEX_REMOTE": str(remote),
            "CORTEX_WEBHOOK_SECRET": HOOK_SECRET,
            "CORTEX_FETCH_INTERVAL": "30",
        },
    )
    parts = assemble(settings)
    _, guest_secret, _ = add_guest(parts.brain, "matrix", ["notes/public/"], daily_proposals=100)
    app = make_app(parts)
    paths = [getattr(r, "path", "") for r in app.app.routes]
    try:
        with RunningServer(app) as running:
            yield World(running.url, parts, guest_secret, paths)
    finally:
        remote_store = getattr(parts, "remote", None)
        if remote_store is not None:
            remote_store.stop()


# Every route family and who may open it. Door routes live in the DoorRouter, the
# rest in the Starlette app; a route of the app not matched here fails the test.
FAMILIES = {
    "/healthz": "public",
    "/.well-known": "oauth probe",
    "/mcp/.well-known": "oauth probe",
    "/register": "oauth probe",
    "/hooks/push": "webhook",
    "/console": "console",
}


def family(path: str) -> str | None:
    for prefix, name in FAMILIES.items():
        if path == prefix or path.startswith(prefix + "/"):
            return name
    return None


def test_every_route_is_in_the_matrix(world):
    unknown = [p for p in world.route_paths if family(p) is None]
    assert unknown == [], f"routes with no auth expectations; add them to the matrix: {unknown}"


def test_auth_matrix(world):
    base = world.url
    rows: list[tuple[str, str, int | str, int]] = []

    def check(route: str, credential: str, expected: int | tuple[int, ...], response: httpx.Response) -> None:
        want = expected if isinstance(expected, tuple) else (expected,)
        rows.append((route, credential, "/".join(map(str, want)), response.status_code))
        assert response.status_code in want, (route, credential, response.status_code, response.text[:200])

    # -- /mcp: the owner's bearer token -------------------------------------------------
    mcp = f"{base}/mcp"
    check("POST /mcp", "none", 401, post_initialize(mcp, {}))
    check("POST /mcp", "wrong bearer", 401, post_initialize(mcp, {"Authorization": "Bearer " + "x" * len(TOKEN)}))
    check("POST /mcp", "right bearer", 200, post_initialize(mcp, {"Authorization": f"Bearer {TOKEN}"}))
    check("POST /mcp", "URL secret as bearer", 401, post_initialize(mcp, {"Authorization": f"Bearer {URL_SECRET}"}))
    check(
        "POST /mcp",
        "guest secret as bearer",
        401,
        post_initialize(mcp, {"Authorization": f"Bearer {world.guest_secret}"}),
    )
    check(
        "POST /mcp", "webhook secret as bearer", 401, post_initialize(mcp, {"Authorization": f"Bearer {HOOK_SECRET}"})
    )
    check("POST /mcp", "owner token as Basic", 401, post_initialize(mcp, {"Authorization": f"Basic {TOKEN}"}))

    # -- /s/<secret>/mcp: the URL is the credential; anything else is a bare 404 ---------------
    check("POST /s/<secret>/mcp", "none (empty secret)", 404, post_initialize(f"{base}/s//mcp", {}))
    check("POST /s/<secret>/mcp", "wrong secret", 404, post_initialize(f"{base}/s/{'y' * len(URL_SECRET)}/mcp", {}))
    check("POST /s/<secret>/mcp", "right secret", 200, post_initialize(f"{base}/s/{URL_SECRET}/mcp", {}))
    check("POST /s/<secret>/mcp", "owner token in the URL", 404, post_initialize(f"{base}/s/{TOKEN}/mcp", {}))
    check(
        "POST /s/<secret>/mcp",
        "guest secret in the URL",
        404,
        post_initialize(f"{base}/s/{world.guest_secret}/mcp", {}),
    )
    check(
        "POST /s/<secret>/mcp",
        "wrong secret + right bearer",
        404,
        post_initialize(f"{base}/s/wrong/mcp", {"Authorization": f"Bearer {TOKEN}"}),
    )

    # -- /g/<secret>/mcp: a guest --------------------------------------------------------------
    check("POST /g/<secret>/mcp", "none (empty secret)", 404, post_initialize(f"{base}/g//mcp", {}))
    check("POST /g/<secret>/mcp", "wrong secret", 404, post_initialize(f"{base}/g/{'z' * 43}/mcp", {}))
    check("POST /g/<secret>/mcp", "right secret", 200, post_initialize(f"{base}/g/{world.guest_secret}/mcp", {}))
    check("POST /g/<secret>/mcp", "owner token in the URL", 404, post_initialize(f"{base}/g/{TOKEN}/mcp", {}))
    check("POST /g/<secret>/mcp", "URL secret in the URL", 404, post_initialize(f"{base}/g/{URL_SECRET}/mcp", {}))
    check(
        "POST /g/<secret>/mcp",
        "guest secret's SHA-256 in the URL",
        404,
        post_initialize(f"{base}/g/{hashlib.sha256(world.guest_secret.encode()).hexdigest()}/mcp", {}),
    )

    # -- /healthz: public by design; it must carry no secret ------------------------------------
    for label, headers in [
        ("none", {}),
        ("wrong bearer", {"Authorization": "Bearer nope"}),
        ("right bearer", {"Authorization": f"Bearer {TOKEN}"}),
        ("guest secret as bearer", {"Authorization": f"Bearer {world.guest_secret}"}),
    ]:
        r = httpx.get(f"{base}/healthz", headers=headers)
        check("GET /healthz", label, 200, r)
        assert not any(s in r.text for s in (TOKEN, URL_SECRET, world.guest_secret, HOOK_SECRET))

    # -- OAuth discovery and registration: the OAuth door's documents are public, a registration
    # without redirect URIs is refused, the rest of the probes (OpenID, suffixed forms) are 404s --
    probes = [p for p in world.route_paths if family(p) == "oauth probe"]
    for path, expected in [("/authorize", 400), ("/token", 401), ("/revoke", 401)]:
        for label, headers in [("none", {}), ("right bearer", {"Authorization": f"Bearer {TOKEN}"})]:
            r = (
                httpx.get(f"{base}{path}", headers=headers)
                if path == "/authorize"
                else httpx.post(f"{base}{path}", headers=headers)
            )
            check(f"{'GET' if path == '/authorize' else 'POST'} {path}", label, expected, r)
            assert "access_token" not in r.text
    assert "/register" in probes and "/.well-known/oauth-protected-resource/mcp" in probes
    for path in probes:
        for label, headers in [
            ("none", {}),
            ("wrong bearer", {"Authorization": "Bearer nope"}),
            ("right bearer", {"Authorization": f"Bearer {TOKEN}"}),
        ]:
            r = (
                httpx.post(f"{base}{path}", json={}, headers=headers)
                if path == "/register"
                else httpx.get(f"{base}{path}", headers=headers)
            )
            expected = (400 if path == "/register" else 200) if path in OAUTH_PATHS else 404
            check(f"{'POST' if path == '/register' else 'GET'} {path}", label, expected, r)
            assert not any(s in r.text for s in (TOKEN, URL_SECRET, world.guest_secret, HOOK_SECRET))

    # -- /hooks/push: HMAC-SHA256 of the body with the webhook secret ----------------------------
    if "/hooks/push" in world.route_paths:
        body = b'{"ref": "refs/heads/main"}'
        hook = f"{base}/hooks/push"
        check("POST /hooks/push", "none", 401, httpx.post(hook, content=body))
        check(
            "POST /hooks/push",
            "wrong signature",
            401,
            httpx.post(hook, content=body, headers={"X-Hub-Signature-256": sign("wrong", body)}),
        )
        check(
            "POST /hooks/push",
            "right signature",
            202,
            httpx.post(hook, content=body, headers={"X-Hub-Signature-256": sign(HOOK_SECRET, body)}),
        )
        check(
            "POST /hooks/push",
            "signed with the owner token",
            401,
            httpx.post(hook, content=body, headers={"X-Hub-Signature-256": sign(TOKEN, body)}),
        )
        check(
            "POST /hooks/push",
            "owner bearer, unsigned",
            401,
            httpx.post(hook, content=body, headers={"Authorization": f"Bearer {TOKEN}"}),
        )

    # -- /console: a signed session cookie, got by signing in with the owner token ----------------
    if any(family(p) == "console" for p in world.route_paths):
        _console_rows(base, world, check)

    write_section(
        "auth",
        "Auth: every route x every kind of credential",
        """
One server with every door open: owner bearer (`/mcp`), URL secret (`/s/<secret>/mcp`), a guest
(`/g/<secret>/mcp`, real Redis), the console (signed session cookie after signing in with the owner
token) and the push webhook (hosted mode, HMAC-SHA256). "Another door's credential" is the secret of
a different door presented here. Every row is asserted by `tests/http/test_auth_matrix.py`.

| route | credential | expected | observed |
|---|---|---|---|
"""
        + "\n".join(f"| {md_cell(r)} | {md_cell(c)} | {e} | {o} |" for r, c, e, o in rows)
        + "\n",
    )


def _console_rows(base: str, world: World, check) -> None:
    guest = f"{base}/g/{world.guest_secret}/mcp"
    pids = []
    for n in range(2):
        r = call(guest, "brain_propose", token=None, path=f"notes/public/m{n}.md", content=f"# M{n}\n", mode="create")
        assert r.error is None, r.error
        pids.append(r.data["id"])
    head = world.parts.brain.store.head()
    pages = [
        "/console/proposals",
        f"/console/proposals/{pids[0]}",
        "/console/activity",
        f"/console/commit/{head}",
        "/console/notes",
        "/console/note/profile.md",
        "/console/guests",
        "/console/status",
        "/console/search?q=profile",
    ]

    # The right credential first: the sign-in throttle counts failures per address.
    owner, r = console_signin(base, TOKEN)
    check("POST /console/signin", "owner token", 303, r)
    cookie_name = next(iter(owner.cookies.keys()))
    forged = httpx.Client(base_url=base, follow_redirects=False, timeout=30)
    value = owner.cookies[cookie_name]
    forged.cookies.set(cookie_name, value[:-2] + ("AA" if not value.endswith("AA") else "BB"), path="/console")
    anon = httpx.Client(base_url=base, follow_redirects=False, timeout=30)
    bearer = httpx.Client(
        base_url=base, follow_redirects=False, timeout=30, headers={"Authorization": f"Bearer {TOKEN}"}
    )
    for page in pages:
        check(f"GET {page.replace(pids[0], '<id>').replace(head, '<sha>')}", "none", 303, anon.get(page))
        check(
            f"GET {page.replace(pids[0], '<id>').replace(head, '<sha>')}",
            "forged session cookie",
            303,
            forged.get(page),
        )
        check(f"GET {page.replace(pids[0], '<id>').replace(head, '<sha>')}", "owner session", 200, owner.get(page))
        check(
            f"GET {page.replace(pids[0], '<id>').replace(head, '<sha>')}",
            "owner bearer header (another door's)",
            303,
            bearer.get(page),
        )
    check("GET /console", "none", 303, anon.get("/console"))
    check("GET /console", "owner session", 303, owner.get("/console"))
    check("GET /console/signin", "none (public form)", 200, anon.get("/console/signin"))
    check("GET /console/<unknown>", "owner session", 404, owner.get("/console/no-such-page"))

    # POSTs need the session's CSRF token as well as its cookie.
    csrf = CSRF.search(owner.get("/console/guests").text).group(1)
    posts = [
        (f"/console/proposals/{pids[0]}/reject", {"reason": "matrix"}, 303),
        (f"/console/proposals/{pids[1]}/accept", {}, 303),
        ("/console/guests/add", {"name": "matrix2", "scopes": "notes/public/"}, 200),
        ("/console/guests/matrix2/revoke", {}, 200),
        ("/console/signout", {}, 303),
    ]
    for path, form, ok in posts:
        label = f"POST {path.replace(pids[0], '<id>').replace(pids[1], '<id>')}"
        check(label, "none", 403, anon.post(path, data=form))
        check(label, "forged session cookie", 403, forged.post(path, data={**form, "csrf": csrf}))
        check(label, "owner session without CSRF token", 403, owner.post(path, data=form))
        check(label, "owner bearer header (another door's)", 403, bearer.post(path, data={**form, "csrf": csrf}))
        check(label, "owner session + CSRF token", ok, owner.post(path, data={**form, "csrf": csrf}))
    check("GET /console/proposals", "signed-out session", 303, owner.get("/console/proposals"))

    # Other doors' secrets are not console credentials (4 failures: under the throttle's 5).
    for label, secret in [
        ("wrong secret", "x" * len(TOKEN)),
        ("URL secret", URL_SECRET),
        ("guest secret", world.guest_secret),
        ("webhook secret", HOOK_SECRET),
    ]:
        refused, r = console_signin(base, secret)
        refused.close()
        check("POST /console/signin", label, 401, r)
    for c in (owner, forged, anon, bearer):
        c.close()


# -- secrets never appear in logs --------------------------------------------------------------


def test_no_secret_in_python_logs(world, caplog):
    """Everything the server logs through Python logging, at INFO, while every secret is used."""
    caplog.set_level(logging.INFO)
    # uvicorn's access log is raised to INFO on purpose: it is the log that prints paths,
    # and paths carry the URL and guest secrets (doors.DoorRouter masks them).
    # uvicorn's loggers do not propagate to the root logger: hang the capture on them directly.
    own = [logging.getLogger(n) for n in ("uvicorn", "uvicorn.error", "uvicorn.access")]
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access", "mcp", "cortex"):
        caplog.set_level(logging.INFO, logger=name)
    for logger in own:
        logger.addHandler(caplog.handler)
    try:
        _use_every_secret(world.url, TOKEN, URL_SECRET, world.guest_secret)
    finally:
        for logger in own:
            logger.removeHandler(caplog.handler)
    # The test's own HTTP clients (httpx, the MCP client) log the URLs they call: not the server's.
    server_side = [r for r in caplog.records if not r.name.startswith(("httpx", "httpcore", "mcp.client"))]
    text = "\n".join(f"{r.name} {r.getMessage()} {r.exc_text or ''}" for r in server_side)
    assert any(r.name == "uvicorn.access" for r in server_side), "no access log captured: the test is blind"
    found = {label: s for label, s in _secrets(TOKEN, URL_SECRET, world.guest_secret).items() if s in text}
    assert found == {}, f"secrets in the server's log: {sorted(found)}"
    assert "/s/redacted/mcp" in text and "/g/redacted/mcp" in text


def _secrets(token: str, url_secret: str, guest_secret: str) -> dict[str, str]:
    return {
        "owner token": token,
        "URL secret": url_secret,
        "guest secret": guest_secret,
        "guest secret hash": hashlib.sha256(guest_secret.encode()).hexdigest(),
        "webhook secret": HOOK_SECRET,
        "credential in a note": NOTE_CREDENTIAL,
        "AWS key in a note": AWS_KEY,
        "Git remote token": REMOTE_TOKEN,
    }


def _use_every_secret(base: str, token: str, url_secret: str, guest_secret: str) -> None:
    """Every door used with its secret, plus wrong guesses that get refused."""
    owner = f"{base}/mcp"
    w = call(
        owner,
        "brain_write",
        token=token,
        path="notes/keys.md",
        mode="create",
        content=f"# Keys\n\nThe API key is {NOTE_CREDENTIAL} and the AWS key is {AWS_KEY}.\n",
    )
    assert w.error is None, w.error
    assert NOTE_CREDENTIAL not in call(owner, "brain_read", token=token, path="notes/keys.md").text
    assert call(owner, "brain_search", token=token, query="API key AWS").error is None
    assert call(owner, "brain_ask", token=token, question="What is the API key?").error is None
    assert call(f"{base}/s/{url_secret}/mcp", "brain_read", token=None, path="notes/keys.md").error is None
    g = call(
        f"{base}/g/{guest_secret}/mcp",
        "brain_propose",
        token=None,
        path="notes/public/logs.md",
        content=f"# Logs\n\nmy key {NOTE_CREDENTIAL}\n",
        mode="create",
    )
    assert g.error is None, g.error
    assert call(owner, "brain_proposals", token=token).error is None
    body = b'{"ref": "refs/heads/main"}'
    httpx.post(f"{base}/hooks/push", content=body, headers={"X-Hub-Signature-256": sign(HOOK_SECRET, body)})
    c, _ = console_signin(base, token)
    c.get("/console/proposals")
    c.get("/console/note/notes/keys.md")
    # Refused guesses: these paths and headers carry secrets of other doors.
    post_initialize(f"{base}/s/{token}/mcp", {})
    post_initialize(f"{base}/g/{url_secret}/mcp", {})
    post_initialize(owner, {"Authorization": f"Bearer {guest_secret}"})
    console_signin(base, url_secret)


def test_no_secret_in_a_real_servers_output(tmp_path):
    """A real `cortex serve` in hosted mode, first run then a restart, every secret used.

    Only the first run's banner may print the owner token and the secret URL, and only
    because the token was generated then; the restart's banner names the file instead.
    """
    need_redis()
    remote = tmp_path / "remote.git"
    init_brain(remote, bare=True)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "redis-server").symlink_to(redis_server_binary())
    home = tmp_path / "home"
    env = {
        "CORTEX_REMOTE": str(remote),
        "CORTEX_WEBHOOK_SECRET": HOOK_SECRET,
        "CORTEX_FETCH_INTERVAL": "30",
        "CORTEX_REMOTE_TOKEN": REMOTE_TOKEN,
    }
    log = tmp_path / "serve.log"
    serve = ServeProcess(home, None, env, bindir, log)
    serve.start()
    banner = serve.output()  # all the first run printed before it served a request
    try:
        token = (home / "owner-token").read_text().strip()
        url_secret = (home / "url-secret").read_text().strip()
        # The guest is added through the console, so the server's own brain holds it.
        c, r = console_signin(serve.url, token)
        csrf = CSRF.search(c.get("/console/guests").text).group(1)
        added = c.post("/console/guests/add", data={"name": "logs", "scopes": "notes/public/", "csrf": csrf})
        guest_secret = re.search(r"/g/([^/\s<\"]+)/mcp", added.text).group(1)
        _wait_for_guest(serve.url, guest_secret)
        _use_every_secret(serve.url, token, url_secret, guest_secret)
    finally:
        serve.stop()
    first = serve.output()
    serve.start()  # the restart: the token is no longer new
    try:
        assert call(f"{serve.url}/mcp", "brain_read", token=token, path="profile.md").error is None
    finally:
        serve.stop()
    second = serve.output()[len(first) :]

    secrets = _secrets(token, url_secret, guest_secret)
    assert first.startswith(banner)
    assert token in banner and url_secret in banner  # printed once, on the first run
    rest = first[len(banner) :] + second
    leaked = {label: s for label, s in secrets.items() if s in rest}
    assert leaked == {}, f"secrets in the server's output after the first banner: {sorted(leaked)}"
    assert not any(s in banner for label, s in secrets.items() if label not in ("owner token", "URL secret"))
    assert "Owner token: in" in second and token not in second
    lines = len(first.splitlines()) + len(second.splitlines())
    write_section(
        "logs",
        "Secrets in logs",
        f"""
Searched: everything a real `cortex serve` wrote to stdout and stderr over two runs (hosted mode on a
local bare remote, private Redis, webhook secret set), {lines} lines, and Python logging at INFO
(`caplog`, all loggers) of an in-process server, while every door was used with its secret and
refused guesses carried other doors' secrets in paths and headers.

| secret | where it may appear | found elsewhere |
|---|---|---|
| owner token | the first run's banner only, when the token was generated (it is shown once, then kept in `$CORTEX_HOME/owner-token`) | no |
| URL secret | the first run's banner only (the connector URL), same rule | no |
| guest secret (and its SHA-256) | printed once by `cortex guest add` / the console's "guest added" page; never by the server | no |
| webhook secret | nowhere | no |
| Git remote token (`CORTEX_REMOTE_TOKEN`) | nowhere | no |
| a credential stored in a note (`sk-ant-…`, `AKIA…`) | nowhere (masked in replies, never logged) | no |

uvicorn's access log (INFO) prints request paths, and a path can hold the URL or a guest secret. The
test raises it to INFO on purpose: the door router masks the secret segment in the request's own
record (`/s/redacted/mcp`, `/g/redacted/mcp`) before anything logs it. `cortex serve` runs uvicorn
at `warning` anyway, so by default no access line is written at all.
""",
    )


def _wait_for_guest(base: str, secret: str) -> None:
    """The server sees a guest added by another process once it reads the new head."""
    import time

    for _ in range(100):
        if post_initialize(f"{base}/g/{secret}/mcp", {}).status_code == 200:
            return
        time.sleep(0.1)
    raise AssertionError("the server never saw the new guest")
