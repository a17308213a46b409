"""A secret of every shape the masker knows, planted wherever a note, a log entry, a path, a
commit message, working state or a guest's proposal can hold one, and read back through every
surface there is: each tool, prompt, resource and resource template the owner's door and the
guest door list (from tools/list, prompts/list, resources/list and resources/templates/list,
so a new one is covered or the test says it is not), a listen stream's events, every console
page and /healthz?detail=1. No value of any secret may appear in any of it.

The secrets are built by code, so no credential-shaped literal sits in the repository.
"""

from __future__ import annotations

import asyncio
import json
import random
import string
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio
import httpx
import pytest
from consolekit import owner
from guestkit import Clock, start_guest_server
from mcp import Client
from mcp.shared.subscriptions import ResourceUpdated
from serverkit import TOKEN, URL_SECRET, client

from cortex.brain.trailers import Actor
from cortex.guests.redis_process import RedisProcess
from cortex.notes.redact import PATTERNS, redact

OWNER = Actor(door="owner", tool="brain_write", client="test")
ALNUM = string.ascii_letters + string.digits


def body(tag: str, n: int, alphabet: str = ALNUM) -> str:
    """A secret's value: `n` characters drawn for `tag`, the same on every run."""
    return "".join(random.Random(tag).choices(alphabet, k=n))


@dataclass(frozen=True)
class Secret:
    label: str  # the mask redact puts in its place: [REDACTED <label>]
    text: str  # as the owner wrote it
    values: tuple[str, ...]  # the parts that must never leave the server


def secrets() -> list[Secret]:
    """One secret of each shape `redact.PATTERNS` knows, several for the API keys."""
    b = body
    rsa, pgp = (b("rsa1", 48), b("rsa2", 48)), b("pgp", 40)
    jwt = (b("jwt1", 20), b("jwt2", 30), b("jwt3", 30))
    hook = (b("hookT", 10, string.ascii_uppercase), b("hookB", 10, string.ascii_uppercase), b("hook", 24))
    keys = {
        "sk-ant-api03-": b("anthropic", 40),
        "sk-proj-": b("openai", 40),
        "ghp_": b("github", 36),
        "github_pat_": b("github pat", 40),
        "xoxb-": b("slack", 30),
        "AKIA": b("aws", 16, string.ascii_uppercase + string.digits),
        "AIza": b("google", 35),
        "glpat-": b("gitlab", 20),
        "sk_" + "live_": b("stripe", 24),
        "hf_": b("huggingface", 34),
        "npm_": b("npm", 36),
    }
    sendgrid = (b("sendgrid1", 22), b("sendgrid2", 43))
    aws = b("aws secret", 40, ALNUM + "/+")
    return [
        Secret(
            "private key", "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(rsa) + "\n-----END RSA PRIVATE KEY-----", rsa
        ),
        Secret(
            "private key",
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\n" + pgp + "\n-----END PGP PRIVATE KEY BLOCK-----",
            (pgp,),
        ),
        Secret("bearer header", "Authorization: Bearer " + b("bearer", 40), (b("bearer", 40),)),
        Secret("authorization header", "Authorization: Basic " + b("basic", 24), (b("basic", 24),)),
        Secret("JWT", "eyJ" + jwt[0] + ".eyJ" + jwt[1] + "." + jwt[2], jwt),
        Secret("webhook URL", "https://hooks.slack.com/services/T" + "/B".join(hook[:2]) + "/" + hook[2], hook),
        *[Secret("API key", prefix + value, (value,)) for prefix, value in keys.items()],
        Secret("API key", "SG." + ".".join(sendgrid), sendgrid),
        Secret("secret setting", 'aws_secret_access_key = "' + aws + '"', (aws,)),
        Secret("secret setting", "aws_session_token: " + b("session", 60), (b("session", 60),)),
        Secret("secret setting", "AccountKey=" + b("azure", 40), (b("azure", 40),)),
        Secret("secret setting", "SharedAccessKey=" + b("azure sas", 40), (b("azure sas", 40),)),
        Secret("URL credential", "https://example.org/feed?token=" + b("feed", 20), (b("feed", 20),)),
        Secret("URL password", "https://deploy:" + b("password", 20) + "@git.example.org/r.git", (b("password", 20),)),
    ]


SECRETS = secrets()
PATH_KEY = "hf_" + body("path key", 34)  # a secret in a note's path
SECRET_PATH = f"notes/public/{PATH_KEY}.md"


def shape(prefix: str) -> Secret:
    """The planted secret whose text starts with `prefix`."""
    (found,) = [s for s in SECRETS if s.text.startswith(prefix)]
    return found


def parts_of(value: str) -> list[str]:
    """The runs of a value that are a leak wherever they show (a cut may keep a part)."""
    return [value[i : i + 12] for i in range(0, max(1, len(value) - 11), 6)]


LEAKS = {part: secret.text for secret in SECRETS for v in secret.values for part in parts_of(v)} | {
    part: PATH_KEY for part in parts_of(PATH_KEY[3:])
}


def leaked(text: str) -> list[str]:
    return sorted({secret for part, secret in LEAKS.items() if part in text})


def test_every_shape_is_planted_and_masked_alone():
    """The planted secrets cover every shape the masker has (a new shape fails here until one
    is planted), and each one alone is masked with its own label."""
    assert {s.label for s in SECRETS} == {label for label, _ in PATTERNS}
    for s in SECRETS:
        shown = redact(f"x\n{s.text}\ny")
        assert f"[REDACTED {s.label}]" in shown and not leaked(shown), (s.text, shown)


def lines() -> str:
    """Every secret, each starting its own line (where a serialized `\\n` glues it to an `n`)."""
    return "\n".join(s.text for s in SECRETS)


# -- what each listed thing is called with ---------------------------------------------------
# Keyed by name: a tool, prompt argument or resource template not named here fails the test, so
# a new surface is read back here or the test says it is not.

PROMPT_ARGUMENTS = {"project": "kiln", "topic": "deploy keys", "note": "notes/public/keys.md"}
NOTE_TEMPLATE = "cortex://note/{+path}"


def owner_calls(proposals: list[str], log: str) -> dict[str, list[dict[str, Any]]]:
    """Each owner tool's calls; `proposals`: open proposal ids (the first accepted, the second
    rejected); `log`: the log file holding the secrets."""
    notes = ["notes/public/keys.md", SECRET_PATH, "profile.md", "projects/kiln.md", log]
    quote_line = shape("sk-ant-").text  # a line as the note holds it
    return {
        "brain_read": [{"path": p} for p in notes] + [{"path": "notes/public/"}],
        "brain_write": [
            {"path": "notes/scratch.md", "mode": "create", "content": "# Scratch\n\n" + lines(), "reason": quote_line}
        ],
        "brain_capture": [{"text": "rotated: " + quote_line, "tags": ["kiln"]}],
        "brain_history": [{}, {"path": "notes/public/keys.md"}],
        "brain_search": [
            {"query": "deploy keys token"},
            {"query": "rotate the kiln key", "include_working": True},
            {"query": PATH_KEY},
        ],
        "brain_corpus": [{"paths": notes}, {"query": "deploy keys"}],
        "brain_list": [{}, {"folder": "notes/public/"}, {"folder": "log/"}],
        "brain_ask": [{"question": "What are the deploy keys?"}],
        "brain_verify": [
            {"answer": "The key is " + quote_line, "citations": [{"path": "notes/public/keys.md", "quote": quote_line}]}
        ],
        "brain_context": [{}, {"project": "kiln"}],
        "brain_working": [{"action": "list", "include_closed": True}, {"action": "list", "project": "kiln"}],
        "brain_handoff": [{"project": "kiln"}],
        "search": [{"query": "deploy keys"}],
        "fetch": [{"id": p} for p in notes],
        "brain_proposals": [{}] + [{"id": p} for p in proposals],
        "brain_accept": [{"id": proposals[0]}],
        "brain_reject": [{"id": proposals[1], "reason": "not this: " + quote_line}],
    }


GUEST_CALLS: dict[str, list[dict[str, Any]]] = {
    "brain_ask": [{"question": "What are the deploy keys?"}, {"question": "What is the feed token?"}],
    "brain_propose": [
        {
            "path": "notes/public/later.md",
            "mode": "create",
            "content": "# Later\n\n" + lines(),
            "why": "because " + shape("ghp_").text,
        }
    ],
}


# Surfaces that must show a mask: each carried a secret back (so its being clean says something).
CARRIERS = [
    *(f"owner {tool} #0" for tool in ("brain_read", "brain_history", "brain_search", "brain_corpus", "brain_verify")),
    *(f"owner {tool} #0" for tool in ("brain_context", "brain_working", "brain_handoff", "search", "fetch")),
    *("owner brain_list #1", "owner brain_proposals #0", "owner brain_reject #0", "owner listen"),
    *("owner prompt brain_boot", "owner prompt brain_decided", "owner resources/list", "owner resource"),
    *("owner template read", "console /console/activity", "console /console/commit/", "console /console/note/"),
    *(
        "console /console/notes?dir=",
        "console /console/proposals",
        "console /console/search",
        "console /console/working",
    ),
]


@dataclass
class Seen:
    """Everything a surface sent, by where it came from."""

    texts: list[tuple[str, str]]

    def add(self, where: str, value: Any) -> None:
        self.texts.append((where, value if isinstance(value, str) else json.dumps(value, default=str)))


def result_texts(result: Any) -> list[Any]:
    """A tool result as a client sees it: every content block and the structured copy."""
    return [part.model_dump() for part in result.content] + [result.structured_content]


async def read_door(c: Client, calls: dict[str, list[dict[str, Any]]], seen: Seen, door: str) -> None:
    """Every tool, prompt, resource and template `c`'s door lists, called or read; each a success."""
    tools = [t.name for t in (await c.list_tools()).tools]
    assert set(tools) == set(calls), f"{door}: tools listed and tools this test calls differ: {set(tools) ^ set(calls)}"
    for name in tools:
        for i, args in enumerate(calls[name]):
            result = await c.call_tool(name, args)
            texts = result_texts(result)
            seen.add(f"{door} {name} #{i}", texts)
            assert not result.is_error, (door, name, args, texts[0])
    for prompt in (await c.list_prompts()).prompts:
        named = {a.name for a in prompt.arguments or []}
        assert named <= set(PROMPT_ARGUMENTS), f"{prompt.name}: a prompt argument this test does not fill: {named}"
        required = {a.name for a in prompt.arguments or [] if a.required}
        for given in (required, named):
            got = await c.get_prompt(prompt.name, {name: PROMPT_ARGUMENTS[name] for name in given})
            seen.add(f"{door} prompt {prompt.name} {sorted(given)}", [m.model_dump() for m in got.messages])
    cursor = None
    while True:
        page = await (c.list_resources(cursor=cursor) if cursor else c.list_resources())
        for resource in page.resources:
            seen.add(f"{door} resources/list", resource.model_dump())
            if "[REDACTED" not in resource.uri:  # a masked URI names no note
                read = await c.read_resource(resource.uri)
                seen.add(f"{door} resource {resource.uri}", [x.model_dump() for x in read.contents])
        cursor = page.next_cursor
        if not cursor:
            break
    for template in (await c.list_resource_templates()).resource_templates:
        assert template.uri_template == NOTE_TEMPLATE, f"a resource template this test does not read: {template}"
        head = (await c.call_tool("brain_history", {"limit": 1})).structured_content["sha"]
        for path in ["notes/public/keys.md", SECRET_PATH, "profile.md"]:
            for uri in (f"cortex://note/{quote(path)}", f"cortex://note/{quote(path)}?as_of={head}"):
                read = await c.read_resource(uri)
                # The SDK echoes the URI asked for: the client's own words, not the server's.
                assert all(x.uri == uri for x in read.contents)
                seen.add(f"{door} template read", [x.model_dump(exclude={"uri"}) for x in read.contents])


def plant(brain: Any, log: str) -> str:
    """The secrets in a log entry (`log`), a note (body, frontmatter, title, a heading), a path,
    the profile, a project page, working state and a commit message (its SHA returned)."""
    aws = shape("aws_secret").text
    brain.write(log, "create", OWNER, content=f"# {brain.today()}\n\n## 09:00 · kiln\n\n{aws}\n{lines()}\n")
    brain.write(
        "notes/public/keys.md",
        "create",
        OWNER,
        content=(
            f"---\ntitle: Deploy keys {shape('ghp_').text}\ndescription: {shape('github_pat_').text}\n"
            f"{shape('npm_').text}: a key as a frontmatter key\n---\n"
            f"# Deploy keys\n\nThe deploy keys and the feed token:\n\n{lines()}\n\n## {shape('sk-proj-').text}\n\n"
            "Rotate monthly.\n"
        ),
    )
    brain.write(SECRET_PATH, "create", OWNER, content=f"# The new keys\n\nSee [[keys]]; {shape('xoxb-').text}\n")
    brain.write("profile.md", "replace", OWNER, content=f"# Profile\n\nI keep the kiln's keys.\n\n{lines()}\n")
    brain.write(
        "projects/kiln.md", "create", OWNER, content=f"# Kiln\n\n## Status\n\n{lines()}\n\n## Next\n\nRotate.\n"
    )
    line = shape("AKIA").text
    brain.write(
        "working/kiln.md", "create", OWNER, content=f"# Kiln\n\n- [ ] focus: rotate {line} ^w1abc\n", reason=aws
    )
    return brain.store.head()


@pytest.fixture
def mserver(tmp_path: Path, brain_path: Path, redis_proc: RedisProcess, clock: Clock):
    server = start_guest_server(tmp_path, brain_path, redis_proc, clock, CORTEX_MEANING="off")
    yield server
    server.stop()


@pytest.mark.slow
def test_every_surface_masks_every_secret(mserver) -> None:
    brain = mserver.brain
    log = f"log/{brain.today().isoformat()}.md"
    told = plant(brain, log)  # the commit whose message holds a secret
    guest = mserver.guest("masker", ["notes/public/"], daily_asks=100, daily_proposals=100, citations=True)
    seen = Seen([])
    owner_url = mserver.owner

    async def doors() -> list[str]:
        async with client(guest.url, token=None) as g:
            await read_door(g, GUEST_CALLS, seen, "guest")
            for more in ("notes/public/b.md", "notes/public/c.md"):  # one accepted, one rejected, one left open
                again = await g.call_tool("brain_propose", {**GUEST_CALLS["brain_propose"][0], "path": more})
                assert not again.is_error
        proposals = [p.id for p in mserver.queue.open()]
        assert len(proposals) == 3
        async with client(owner_url) as c:
            listed = [r.uri for r in (await c.list_resources()).resources]
            masked = [u for u in listed if "[REDACTED" in u]
            assert len(masked) == 1, f"the note with a secret in its path is not listed masked: {leaked(str(listed))}"
            masked_uri = masked[0]
            # A listen stream hears of the secret-path note's change by its URI as listed: masked.
            async with c.listen(resources_list_changed=True, resource_subscriptions=[masked_uri]) as sub:
                await anyio.to_thread.run_sync(
                    lambda: brain.write(SECRET_PATH, "append", OWNER, content=shape("glpat-").text + "\n")
                )
                with anyio.fail_after(30):
                    async for event in sub:
                        seen.add("owner listen", event.model_dump() if hasattr(event, "model_dump") else repr(event))
                        if isinstance(event, ResourceUpdated):
                            assert event.uri == masked_uri
                            break
            await read_door(c, owner_calls(proposals, log), seen, "owner")
        for url in (f"{mserver.url}/s/{URL_SECRET}/mcp",):  # the URL door is the owner's door's server again
            async with client(url, token=None) as u, client(owner_url) as c:
                assert [t.name for t in (await u.list_tools()).tools] == [t.name for t in (await c.list_tools()).tools]
                assert [p.name for p in (await u.list_prompts()).prompts] == [
                    p.name for p in (await c.list_prompts()).prompts
                ]
        return proposals

    proposals = asyncio.run(doors())

    console = owner(mserver.url)
    routes = [r for r in mserver.running.server.config.app.app.routes if getattr(r, "methods", None)]
    gets = sorted({r.path for r in routes if "GET" in r.methods and r.path.startswith("/console")})
    head = brain.store.head()
    fill = {
        "{pid}": proposals,
        "{sha}": [head, told],
        "{path:path}": ["notes/public/keys.md", SECRET_PATH, "profile.md", log, "working/kiln.md"],
        "{rest:path}": ["no-such-page"],
    }
    queries = {"/console/notes": ["", "?dir=notes/public"], "/console/search": ["?q=deploy+keys"]}
    pages = []
    for path in gets:
        holes = [h for h in fill if h in path]
        assert len(holes) <= 1 and "{" not in path.replace(holes[0], "") if holes else "{" not in path, path
        for value in fill[holes[0]] if holes else [None]:
            page = path.replace(holes[0], value) if holes else path
            pages += [page + q for q in queries.get(path, [""])]
    for page in pages:
        r = console.get(page)
        assert r.status_code < 500, (page, r.status_code)
        seen.add(f"console {page}", r.text)
    detail = httpx.get(f"{mserver.url}/healthz?detail=1", headers={"Authorization": f"Bearer {TOKEN}"})
    assert detail.status_code == 200
    seen.add("/healthz?detail=1", detail.text)

    leaks = [(where, leaked(text)) for where, text in seen.texts if leaked(text)]
    assert not leaks, leaks[:5]
    # The secrets were read back, masked: each shape's mask shows, and each kind of surface showed one.
    everything = "\n".join(text for _, text in seen.texts)
    assert all(f"[REDACTED {label}]" in everything for label, _ in PATTERNS)
    masked = {where for where, text in seen.texts if "[REDACTED" in text}
    assert not [c for c in CARRIERS if not any(where.startswith(c) for where in masked)]
    boot = "\n".join(text for where, text in seen.texts if "prompt brain_boot" in where)
    assert "[REDACTED secret setting]" in boot and "09:00" in boot  # the log entry of issue 62
    assert len(pages) >= 20 and any("/console/proposals/" in p for p in pages)
