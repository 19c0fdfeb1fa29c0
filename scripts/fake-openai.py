#!/usr/bin/env python3
"""An OpenAI-compatible Chat Completions endpoint for benchmarks: answers
every request with one streamed sentence and appends to LOG one line per
request: its arrival time (Unix seconds), whether the messages hold a
repository map, and whether they hold search hits.
usage: fake-openai.py PORT LOG"""
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

port, log = int(sys.argv[1]), sys.argv[2]


class H(BaseHTTPRequestHandler):
    def do_POST(self):
        t = time.time()
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        try:
            msgs = json.loads(body).get("messages", [])
        except ValueError:
            msgs = []
        text = "\n".join(str(m.get("content", "")) for m in msgs)
        with open(log, "a") as f:
            f.write(f"{t:.3f} {'## Repository map' in text} {'Search hit for' in text}\n")
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        chunk = {"id": "c1", "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Done."}, "finish_reason": "stop"}]}
        self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\ndata: [DONE]\n\n")

    def log_message(self, *args):
        pass


ThreadingHTTPServer(("127.0.0.1", port), H).serve_forever()
