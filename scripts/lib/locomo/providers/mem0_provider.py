#!/usr/bin/env python3
"""mem0 (the `mem0ai` package, 2.2.1) as an external provider of host's LoCoMo benchmark.

It speaks scripts/lib/locomo/PROVIDER_PROTOCOL.md (protocol 1) over `mem0.Memory` with qdrant in
local mode under HOST_PROVIDER_DATA_DIR, and its LLM and embedder on an OpenAI-compatible server
the user names (host's loopback model server, or a real API). What mem0 asks that server is in
scripts/lib/locomo/MEM0.md. mem0 is not in the standard library: `--python` names an interpreter
that has it, and the program re-executes itself with it (same process, so host can still stop it).

    python3 -m venv /tmp/mem0-venv && /tmp/mem0-venv/bin/pip install mem0ai==2.2.1
    host run scripts/locomo_conformance.rhai -- --provider external:scripts/lib/locomo/providers/mem0_provider.py \\
      --provider-args="--python /tmp/mem0-venv/bin/python --llm-base-url http://127.0.0.1:8000/v1 \\
      --llm-model extractor --embedder-base-url http://127.0.0.1:8000/v1 --embedder-model minilm"

Ingest follows mem0's own LoCoMo evaluation: one mem0 user per speaker, who sees the session with
their own turns as `user` messages and the others' as `assistant` messages, added two messages
at a time. Each add carries the batch's turn ids and the session's date_time as mem0 metadata,
which mem0 copies onto every memory it extracts from that batch: search answers them as the
item's `turn_ids` and `date_time`. The session date reaches the LLM through mem0's per-call
custom instructions (`prompt`), because mem0 2.2.1 otherwise tells it today's date.
"""

import argparse
import importlib.util
import json
import os
import shutil
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PROTOCOL = 1
NAME = "mem0"
MEM0_VERSION = "2.2.1"  # the version scripts/lib/locomo/MEM0.md describes
REEXEC_MARKER = "HOST_MEM0_PROVIDER_REEXEC"
LOOPBACK = ["127.0.0.1", "localhost", "::1"]
# Packages whose presence makes mem0 download a model on first use: spaCy fetches
# en_core_web_sm (entity links, BM25 lemmas), fastembed fetches Qdrant/bm25 from Hugging Face.
DOWNLOADING_PACKAGES = ["spacy", "fastembed"]


class BadRequest(Exception):
    """A request that breaks the protocol: answered 400 with its message."""


def parse_options(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=int(os.environ.get("HOST_PROVIDER_PORT", "0")))
    parser.add_argument("--python", help="an interpreter with mem0ai installed; the program re-executes itself with it")
    parser.add_argument("--llm-base-url", required=True, help="OpenAI-compatible base URL of the LLM, as http://127.0.0.1:8000/v1")
    parser.add_argument("--llm-model", required=True)
    parser.add_argument("--embedder-base-url", required=True, help="OpenAI-compatible base URL of the embedder")
    parser.add_argument("--embedder-model", required=True)
    parser.add_argument("--embedding-dims", type=int, default=384)
    parser.add_argument("--api-key-env", help="the environment variable holding the API key [default: none, a placeholder key]")
    parser.add_argument("--perspective", choices=["speakers", "single"], default="speakers",
                        help="speakers: one mem0 user per speaker (mem0's LoCoMo evaluation); single: one user, every turn a user message")
    parser.add_argument("--batch-size", type=int, default=2, help="messages per mem0 add call (mem0's evaluation: 2)")
    parser.add_argument("--date-in", choices=["instructions", "text"], default="instructions",
                        help="where the LLM sees the session date: mem0's custom instructions, or a prefix of each message")
    parser.add_argument("--threshold", type=float, default=0.1, help="mem0's minimum semantic score of a search result")
    parser.add_argument("--crash-after-adds", type=int, default=0,
                        help="exit (code 3, no answer) after this many mem0 add calls in all: a provider dying mid-ingest, for tests [default: never]")
    options = parser.parse_args(argv)
    if options.port <= 0:
        parser.error("--port N (or HOST_PROVIDER_PORT) is required")
    if options.batch_size < 1:
        parser.error("--batch-size must be at least 1")
    return options


def reexec_with(python):
    """Replace this process by `python` running this file, once (the marker stops a loop)."""
    if not python or os.environ.get(REEXEC_MARKER) == "1":
        return
    os.environ[REEXEC_MARKER] = "1"
    try:
        os.execv(python, [python, os.path.abspath(__file__)] + sys.argv[1:])
    except OSError as error:
        fail(f"cannot run `--python {python}`: {error.strerror}", "name a Python interpreter, as /tmp/mem0-venv/bin/python")


def fail(message, hint=None):
    print(f"{NAME}: error: {message}" + (f"\n  hint: {hint}" if hint else ""), file=sys.stderr, flush=True)
    sys.exit(2)


def prepare_environment(data_dir):
    """What must hold before mem0 is imported: no telemetry, no writes to ~/.mem0, no proxy for loopback."""
    os.environ["MEM0_TELEMETRY"] = "False"  # read once, when mem0.memory.telemetry is imported
    os.environ["MEM0_DIR"] = os.path.join(data_dir, "mem0-home")  # mem0 creates it at import
    os.environ.pop("OPENROUTER_API_KEY", None)  # its presence sends mem0's OpenAI LLM to openrouter.ai
    for name in ("NO_PROXY", "no_proxy"):
        present = [entry for entry in os.environ.get(name, "").split(",") if entry.strip()]
        os.environ[name] = ",".join(present + [host for host in LOOPBACK if host not in present])


def check_packages():
    for package in DOWNLOADING_PACKAGES:
        spec = importlib.util.find_spec(package)
        if spec is not None:
            fail(f"`{package}` can be imported (from `{spec.origin}`), and mem0 would download a model with it",
                 f"use a virtual environment without it (`{sys.executable} -m pip uninstall {package}`)")
    if importlib.util.find_spec("mem0") is None:
        fail(f"mem0 is not installed for `{sys.executable}`",
             f"pass --python with an interpreter that has mem0ai=={MEM0_VERSION}")
    from importlib.metadata import version
    installed = version("mem0ai")
    if installed != MEM0_VERSION:
        fail(f"mem0ai {installed} is installed, this provider speaks for {MEM0_VERSION}",
             f"install mem0ai=={MEM0_VERSION}; a new version may ask its LLM something else (scripts/lib/locomo/MEM0.md)")
    return installed


def package_versions():
    from importlib.metadata import version
    return {name: version(name) for name in ("mem0ai", "qdrant-client", "openai")}


def turn_text(turn, speaker, date_time, date_in):
    text = f"{speaker}: {turn.get('text') or ''}"
    if turn.get("caption"):
        text += f" [shares {turn['caption']}]"
    return f"[{date_time}] {text}" if date_in == "text" and date_time else text


def instructions(user, others, date_time, date_in):
    """mem0's custom instructions for one add call: who `user` is, and the session's date."""
    if user is None:
        lines = ["Each message starts with its speaker's name. Name the people in every memory; never write 'user' or 'assistant'."]
    else:
        lines = [f"The user is {user}; the assistant messages are from {', '.join(others) or 'the other participants'}. "
                 "Name the people in every memory; never write 'user' or 'assistant'."]
    if date_in == "instructions" and date_time:
        lines.append(f"These messages were exchanged at {date_time}. Take that as the observation date: "
                     "resolve relative times (yesterday, last week) against it, not against the current date.")
    return "\n".join(lines)


class Mem0Memory:
    """One conversation in a fresh mem0 store (qdrant and history database in their own folder)."""

    def __init__(self, options, data_dir, api_key):
        self.options = options
        self.data_dir = data_dir
        self.api_key = api_key
        self.generation = 0
        self.memory = None
        self.folder = None
        self.conversation_id = None
        self.user_ids = []
        self.turn_ids = set()
        self.adds = 0  # add calls in all, for --crash-after-adds

    def config(self, folder):
        return {
            "llm": {"provider": "openai", "config": {
                "model": self.options.llm_model, "openai_base_url": self.options.llm_base_url, "api_key": self.api_key}},
            "embedder": {"provider": "openai", "config": {
                "model": self.options.embedder_model, "openai_base_url": self.options.embedder_base_url,
                "embedding_dims": self.options.embedding_dims, "api_key": self.api_key}},
            "vector_store": {"provider": "qdrant", "config": {
                "collection_name": "locomo", "embedding_model_dims": self.options.embedding_dims,
                "path": os.path.join(folder, "qdrant"), "on_disk": False}},
            "history_db_path": os.path.join(folder, "history.db"),
        }

    def settings(self):
        """The configuration without the key and the run's paths."""
        config = self.config("")
        config["llm"]["config"].pop("api_key")
        config["embedder"]["config"].pop("api_key")
        config["vector_store"]["config"].pop("path")
        config.pop("history_db_path")
        return config

    def reset(self):
        if self.memory is not None:
            self.memory.close()
            client = getattr(self.memory.vector_store, "client", None)
            if client is not None:
                client.close()  # releases the local qdrant folder's lock
            self.memory = None
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None
        self.conversation_id = None
        self.user_ids = []
        self.turn_ids = set()

    def open(self):
        from mem0 import Memory
        self.generation += 1
        self.folder = os.path.join(self.data_dir, f"store-{self.generation}")
        os.makedirs(self.folder)
        self.memory = Memory.from_config(self.config(self.folder))

    def ingest(self, conversation):
        self.reset()
        self.open()
        sessions = conversation.get("sessions") or []
        speakers = list(conversation.get("speakers") or [])
        for session in sessions:
            for turn in session.get("turns") or []:
                if turn.get("speaker") not in speakers:
                    speakers.append(turn.get("speaker"))
        perspectives = list(enumerate(speakers)) if self.options.perspective == "speakers" else [(None, None)]
        self.user_ids = [f"speaker-{index}" if index is not None else "conversation" for index, _ in perspectives]
        started, calls, stored = time.monotonic(), 0, 0
        for session in sessions:
            turns = session.get("turns") or []
            date_time = session.get("date_time")
            for turn in turns:
                self.turn_ids.add(turn["id"])
            for (index, speaker), user_id in zip(perspectives, self.user_ids):
                messages = [{
                    "role": "user" if speaker is None or turn.get("speaker") == speaker else "assistant",
                    "content": turn_text(turn, turn.get("speaker"), date_time, self.options.date_in),
                } for turn in turns]
                prompt = instructions(speaker, [s for s in speakers if s != speaker], date_time, self.options.date_in)
                for start in range(0, len(messages), self.options.batch_size):
                    batch = slice(start, start + self.options.batch_size)
                    metadata = {"session": session.get("number"), "date_time": date_time,
                                "turn_ids": [turn["id"] for turn in turns[batch]]}
                    result = self.memory.add(messages[batch], user_id=user_id, metadata=metadata, infer=True, prompt=prompt)
                    calls += 1
                    stored += len(result.get("results") or [])
                    self.adds += 1
                    if self.adds == self.options.crash_after_adds:
                        print(f"{NAME}: exiting after {self.adds} add calls (--crash-after-adds)", file=sys.stderr, flush=True)
                        os._exit(3)
        self.conversation_id = conversation["id"]
        print(f"{NAME}: ingested {self.conversation_id}: {len(self.turn_ids)} turns, {len(sessions)} sessions, "
              f"{calls} add calls, {stored} memories in {time.monotonic() - started:.1f} s", file=sys.stderr, flush=True)
        return stored

    def search(self, conversation_id, query, k):
        if conversation_id != self.conversation_id or not query.strip():
            return []
        found = []
        for user_id in self.user_ids:
            answer = self.memory.search(query, top_k=k, filters={"user_id": user_id}, threshold=self.options.threshold)
            found.extend(answer.get("results") or [])
        found.sort(key=lambda result: -(result.get("score") or 0.0))
        items, seen = [], set()
        for result in found:
            text = (result.get("memory") or "").strip()
            if not text or text in seen:
                continue  # two speakers' scopes may hold the same memory
            seen.add(text)
            metadata = result.get("metadata") or {}
            items.append({
                "text": text, "score": float(result.get("score") or 0.0),
                "turn_ids": [turn_id for turn_id in metadata.get("turn_ids") or [] if turn_id in self.turn_ids],
                "date_time": metadata.get("date_time"),
            })
            if len(items) == k:
                break
        return items


class Provider:
    """The protocol's four requests over a `Mem0Memory`."""

    def __init__(self, memory, versions):
        self.memory = memory
        self.versions = versions
        self.lock = threading.Lock()

    def handle(self, path, body):
        with self.lock:
            if path == "/describe":
                options = self.memory.options
                return {"protocol": PROTOCOL, "name": NAME, "version": self.versions["mem0ai"], "settings": {
                    "mem0": self.memory.settings(), "packages": self.versions, "perspective": options.perspective,
                    "batch_size": options.batch_size, "date_in": options.date_in, "threshold": options.threshold,
                    "infer": True, "keyword_search": False, "entity_links": False}}
            if path == "/ingest":
                conversation = body.get("conversation")
                if not isinstance(conversation, dict) or not isinstance(conversation.get("id"), str):
                    raise BadRequest("`conversation` must be an object with a string `id`")
                return {"ok": True, "items": self.memory.ingest(conversation)}
            if path == "/search":
                query, k = body.get("query"), body.get("k")
                if not isinstance(query, str):
                    raise BadRequest("`query` must be a string")
                if not isinstance(k, int) or isinstance(k, bool) or k < 1:
                    raise BadRequest(f"`k` must be an integer of at least 1, got {json.dumps(k)}")
                return {"items": self.memory.search(body.get("conversation_id"), query, k)}
            if path == "/reset":
                self.memory.reset()
                return {"ok": True}
            return None


def handler_for(provider):
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            try:
                length = int(self.headers.get("content-length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except ValueError as error:
                    raise BadRequest(f"the body is not JSON: {error}")
                if not isinstance(body, dict):
                    raise BadRequest("the body must be a JSON object")
                answer = provider.handle(self.path, body)
                if answer is None:
                    self.reply(404, {"error": f"no endpoint `{self.path}`"})
                else:
                    self.reply(200, answer)
            except BadRequest as error:
                self.reply(400, {"error": str(error)})
            except Exception as error:  # mem0's or the model server's failure: say it, keep serving
                message = f"{type(error).__name__}: {error}"
                if type(error).__module__.startswith("openai") or type(error).__name__ == "LLMError":
                    options = provider.memory.options
                    message += f" (LLM `{options.llm_base_url}`, embedder `{options.embedder_base_url}`)"
                print(f"{NAME}: {self.path}: {message}", file=sys.stderr, flush=True)
                self.reply(500, {"error": message})

        def reply(self, status, answer):
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format, *args):
            pass  # no access log: stderr is for what went wrong

    return Handler


def quiet_known_warnings():
    """mem0 warns that spaCy and fastembed are missing; here that is the configuration (settings say so)."""
    import logging

    class Known(logging.Filter):
        def filter(self, record):
            message = record.getMessage()
            return not ("spaCy" in message or "fastembed not installed" in message)

    for name in ("mem0.utils.spacy_models", "mem0.vector_stores.qdrant"):
        logging.getLogger(name).addFilter(Known())


def main():
    options = parse_options(sys.argv[1:])
    reexec_with(options.python)
    data_dir = os.environ.get("HOST_PROVIDER_DATA_DIR")
    if not data_dir or not os.path.isdir(data_dir):
        fail("HOST_PROVIDER_DATA_DIR must name a directory", "host sets it; by hand, export it first")
    api_key = "unused"
    if options.api_key_env:
        api_key = os.environ.get(options.api_key_env)
        if not api_key:
            fail(f"`--api-key-env {options.api_key_env}`: the variable is not set",
                 f"pass it to the provider (host: --provider-pass-env={options.api_key_env})")
    prepare_environment(data_dir)
    check_packages()
    quiet_known_warnings()
    import mem0  # noqa: F401  (slow; before listening, so a broken install fails the start)
    provider = Provider(Mem0Memory(options, data_dir, api_key), package_versions())
    server = ThreadingHTTPServer(("127.0.0.1", options.port), handler_for(provider))
    print(f"{NAME} {provider.versions['mem0ai']} listening on 127.0.0.1:{options.port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
