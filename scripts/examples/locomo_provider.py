#!/usr/bin/env python3
"""An example external memory provider for host's LoCoMo benchmark, Python 3 standard library only.

It speaks scripts/lib/locomo/PROVIDER_PROTOCOL.md (protocol 1): HTTP on 127.0.0.1, JSON in and
out, one conversation held at a time, in memory. Each turn is one item ("Speaker: text [shares
caption]"), ranked by BM25 (k1 1.5, b 0.75) over lowercase words. Copy it as the start of an
adapter for your own memory system: replace `Memory`.

    host run scripts/locomo_conformance.rhai -- --provider external:scripts/examples/locomo_provider.py
    host run scripts/locomo.rhai -- --providers bm25,external:scripts/examples/locomo_provider.py
    python3 scripts/examples/locomo_provider.py --port 8765   # by hand; then, for instance:
    curl -s -XPOST 127.0.0.1:8765/describe -d '{}'

`--fail MODE` makes it break the protocol on purpose, for the conformance check's own tests:
crash-on-ingest (exits mid-ingest, without answering), bad-search (malformed items),
slow (each search answers after --delay-s seconds), keep-conversations (an ingest does not drop
the conversation before, and searches see all of them), ignore-reset (/reset answers ok and forgets nothing).
"""

import argparse
import json
import math
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PROTOCOL = 1
NAME = "example-bm25"
VERSION = "0.1.0"
FAIL_MODES = ["crash-on-ingest", "bad-search", "slow", "keep-conversations", "ignore-reset"]
K1 = 1.5
B = 0.75
WORD = re.compile(r"[a-z0-9]+")


class BadRequest(Exception):
    """A request that breaks the protocol: answered 400 with its message."""


def words(text):
    return WORD.findall(text.lower())


class Memory:
    """The turns of the conversations held, and BM25 over them."""

    def __init__(self, leaky=False):
        self.items = []  # {"conversation_id", "text", "turn_ids", "date_time", "words"}
        self.leaky = leaky  # --fail keep-conversations: every search sees every conversation held

    def reset(self):
        self.items = []

    def ingest(self, conversation, keep_others=False):
        if not keep_others:
            self.reset()
        for session in conversation.get("sessions") or []:
            for turn in session.get("turns") or []:
                text = f"{turn.get('speaker', '')}: {turn.get('text', '')}"
                if turn.get("caption"):
                    text += f" [shares {turn['caption']}]"
                self.items.append({
                    "conversation_id": conversation["id"], "text": text, "turn_ids": [turn["id"]],
                    "date_time": session.get("date_time"), "words": words(text),
                })
        return sum(1 for item in self.items if item["conversation_id"] == conversation["id"])

    def search(self, conversation_id, query, k):
        documents = [item for item in self.items if item["conversation_id"] == conversation_id or self.leaky]
        terms = set(words(query))
        if not documents or not terms:
            return []
        count = len(documents)
        average = sum(len(d["words"]) for d in documents) / count or 1.0
        frequency = {t: sum(1 for d in documents if t in d["words"]) for t in terms}
        scored = []
        for order, document in enumerate(documents):
            score = 0.0
            for term in terms:
                tf = document["words"].count(term)
                if tf == 0:
                    continue
                idf = math.log((count - frequency[term] + 0.5) / (frequency[term] + 0.5) + 1)
                score += idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * len(document["words"]) / average))
            if score > 0:
                scored.append((-score, order, document))
        scored.sort(key=lambda entry: (entry[0], entry[1]))
        return [
            {"text": d["text"], "score": -s, "turn_ids": d["turn_ids"], "date_time": d["date_time"]}
            for s, _, d in scored[:k]
        ]


class Provider:
    """The protocol's four requests over a `Memory`, with the `--fail` mode applied."""

    def __init__(self, fail, delay_s):
        self.memory = Memory(leaky=fail == "keep-conversations")
        self.fail = fail
        self.delay_s = delay_s
        self.lock = threading.Lock()

    def handle(self, path, body):
        with self.lock:
            if path == "/describe":
                return {"protocol": PROTOCOL, "name": NAME, "version": VERSION, "settings": {
                    "unit": "turn", "ranking": "bm25", "k1": K1, "b": B, "fail": self.fail}}
            if path == "/ingest":
                conversation = body.get("conversation")
                if not isinstance(conversation, dict) or not isinstance(conversation.get("id"), str):
                    raise BadRequest("`conversation` must be an object with a string `id`")
                if self.fail == "crash-on-ingest":
                    print(f"{NAME}: --fail crash-on-ingest: exiting mid-ingest of {conversation['id']}",
                          file=sys.stderr, flush=True)
                    os._exit(3)
                stored = self.memory.ingest(conversation, keep_others=self.fail == "keep-conversations")
                return {"ok": True, "items": stored}
            if path == "/search":
                query, k = body.get("query"), body.get("k")
                if not isinstance(query, str):
                    raise BadRequest("`query` must be a string")
                if not isinstance(k, int) or isinstance(k, bool) or k < 1:
                    raise BadRequest(f"`k` must be an integer of at least 1, got {json.dumps(k)}")
                if self.fail == "slow":
                    time.sleep(self.delay_s)
                if self.fail == "bad-search":
                    return {"items": [{"text": 42, "score": "high"}]}
                return {"items": self.memory.search(body.get("conversation_id"), query, k)}
            if path == "/reset":
                if self.fail != "ignore-reset":
                    self.memory.reset()
                return {"ok": True}
            return None


def handler_for(provider):
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            try:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if not isinstance(body, dict):
                    raise BadRequest("the body must be a JSON object")
                answer = provider.handle(self.path, body)
                if answer is None:
                    self.reply(404, {"error": f"no endpoint `{self.path}`"})
                else:
                    self.reply(200, answer)
            except (BadRequest, ValueError) as error:
                self.reply(400, {"error": str(error)})
            except Exception as error:  # the provider's own failure: say it, keep serving
                print(f"{NAME}: {self.path}: {error!r}", file=sys.stderr, flush=True)
                self.reply(500, {"error": repr(error)})

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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=int(os.environ.get("HOST_PROVIDER_PORT", "0")))
    parser.add_argument("--fail", choices=FAIL_MODES, default=None)
    parser.add_argument("--delay-s", type=float, default=60.0, help="how long --fail slow waits")
    options = parser.parse_args()
    if options.port <= 0:
        parser.error("--port N (or HOST_PROVIDER_PORT) is required")
    server = ThreadingHTTPServer(("127.0.0.1", options.port), handler_for(Provider(options.fail, options.delay_s)))
    print(f"{NAME} {VERSION} listening on 127.0.0.1:{options.port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
