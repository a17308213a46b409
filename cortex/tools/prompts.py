"""The prompts the owner's clients offer as slash commands (MCP prompts): a boot prompt for a
session, "what did I decide about …", and "file this conversation into my notes". Each is a
`BrainPrompt`: its name, title, description, arguments (a frozen dataclass, each field with
its description, as a tool's request) and what it renders to, from the brain at the head.
Text from notes goes in fenced with a fresh nonce, as every reply's does.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import Field

from cortex.notes.data_envelope import DATA_NOTICE, fence, new_nonce
from cortex.notes.paths import check_path
from cortex.tools.context import VERIFY_ADVICE, ContextRequest, context
from cortex.tools.search import SearchRequest, search_notes
from cortex.tools.tool import Caller
from cortex.tools.toolset import Tools

__all__ = ["BrainPrompt", "PROMPTS", "BootArgs", "DecidedArgs", "FileArgs"]

DECISION_HITS = 8  # passages a "what did I decide" prompt starts from


@dataclass(frozen=True)
class BrainPrompt:
    name: str
    title: str
    description: str
    arguments: type
    render: Callable[[Tools, Any], str]


@dataclass(frozen=True, kw_only=True)
class BootArgs:
    project: Annotated[
        str | None, Field(description="A project key (e.g. kiln): its log entries and open items only")
    ] = None


@dataclass(frozen=True, kw_only=True)
class DecidedArgs:
    topic: Annotated[str, Field(description="What the decision was about, in your words (e.g. the kiln's glaze)")]


@dataclass(frozen=True, kw_only=True)
class FileArgs:
    project: Annotated[str | None, Field(description="The project the conversation belongs to, if any")] = None
    note: Annotated[
        str | None, Field(description="The note to file it into (e.g. notes/kiln.md); default: the model proposes one")
    ] = None


def boot(tools: Tools, args: BootArgs) -> str:
    """brain_context for a project, phrased for the model."""
    reply = context(tools, ContextRequest(project=args.project), Caller(door="owner"))
    scope = f" for the project {args.project}" if args.project else ""
    return (
        f"You are working with my notes, kept in Cortex (a Git repository of Markdown). Here is my brain's "
        f"context{scope}, as brain_context gives it: my profile, the last days of my log, my open items and "
        f"a router of my notes, served from commit {reply['sha']}. {DATA_NOTICE.replace('nonce', reply['nonce'])}\n\n"
        f"{json.dumps(reply, ensure_ascii=False, indent=1)}\n\n"
        "Find more with brain_search, read a note with brain_read, and record what we settle with "
        f"brain_capture or brain_write. {VERIFY_ADVICE}"
    )


def decided(tools: Tools, args: DecidedArgs) -> str:
    """What the notes say was decided about a topic: the passages to start from, and how to answer."""
    found = search_notes(tools, SearchRequest(query=f"{args.topic} decided decision", k=DECISION_HITS))
    nonce = new_nonce()
    shown = "\n".join(
        fence(f"{h['path']} > {h['heading']} ({h['passage_state']})", h["passage"], nonce) for h in found["hits"]
    )
    return (
        f"What did I decide about {args.topic}? Answer only from my notes. These passages, from commit "
        f"{found['sha']}, are where brain_search starts ({DATA_NOTICE.replace('nonce', nonce)}):\n\n"
        f"{shown or '(no note matched)'}\n\n"
        "Read the notes they come from with brain_read (a decision may sit under a Decisions heading or in "
        "working state: brain_working with action list), prefer the newest live decision, and say when one "
        "was replaced. Do not answer from a passage that is not live. If the notes do not say, say so. " + VERIFY_ADVICE
    )


def file_conversation(tools: Tools, args: FileArgs) -> str:
    """How to file this conversation into the notes: what to keep and which tools write it."""
    if args.note is not None:
        check_path(args.note)  # the rule every write obeys: refused here, in one line, not at the write
    where = (
        f"into {args.note} with brain_write (brain_read it first; append or edit, never replace it whole)"
        if args.note
        else "with brain_write into the note it belongs to (brain_search for it; a new note under notes/ if none fits)"
    )
    project = f" for the project {args.project}" if args.project else ""
    return (
        f"File what we settled in this conversation{project} {where}. Keep the decisions, the facts and the "
        "numbers as stated, each once, in plain Markdown under a heading with today's date; leave out "
        "small talk and anything you are unsure of. Open items go to brain_working (action add: focus, "
        "decision, question, handoff or todo), a quick line to brain_capture. Each write is one Git commit: "
        "give a reason, pass the blob from brain_read as expected_blob, and never write a secret (a key, a "
        "password, a token) into a note. Show me what you wrote, with the commit each reply names."
    )


PROMPTS = [
    BrainPrompt(
        "brain_boot",
        "Start with my notes",
        "The session's start: the owner's profile, recent log, open items and a router of notes (brain_context), "
        "phrased for the model, with how to search, read, record and verify.",
        BootArgs,
        boot,
    ),
    BrainPrompt(
        "brain_decided",
        "What did I decide about …",
        "What the notes say was decided about a topic: the passages brain_search starts from, fenced, and how to "
        "answer from them and verify the answer.",
        DecidedArgs,
        decided,
    ),
    BrainPrompt(
        "brain_file_conversation",
        "File this conversation into my notes",
        "Asks the model to write what this conversation settled into the notes (brain_write, brain_working, "
        "brain_capture), one commit a write, no secrets.",
        FileArgs,
        file_conversation,
    ),
]
