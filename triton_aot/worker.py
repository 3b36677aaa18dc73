"""Bazel persistent worker, JSON protocol (`--persistent_worker`).

Reads WorkRequest objects from stdin ({"arguments": [...], "requestId": N, ...}) and writes
one WorkResponse line per request to stdout ({"exitCode", "output", "requestId"}).

- Requests are parsed as a stream of JSON objects, with or without newlines between them
  (older Bazel versions write no separator).
- Only WorkResponses may reach stdout: the real stdout is kept on a private descriptor and
  fd 1 is pointed at stderr, so stray prints (from triton, ptxas, kernel files) cannot
  corrupt the protocol.
- Everything a request writes to fds 1 and 2 (messages, triton/MLIR diagnostics) is captured
  into the response's "output".
- Requests run one after the other. The handler isolates them (fresh flags, fresh kernel
  import, private triton cache: see compile.run); the worker restores the working directory
  (`sandboxDir` is honoured for multiplex sandboxing).
- Cancel requests are ignored: a request is always answered before the next is read, so
  there is never anything in flight to cancel.
"""

from __future__ import annotations

import codecs
import json
import os
import sys
import tempfile
from typing import Callable, Iterator, Sequence

Handler = Callable[[list], int]  # arguments -> exit code; writes its messages to stderr


def read_requests(fd: int) -> Iterator[dict]:
    """JSON objects from `fd` until EOF."""
    decoder = json.JSONDecoder()
    utf8 = codecs.getincrementaldecoder("utf-8")()
    buffer = ""
    while True:
        chunk = os.read(fd, 1 << 16)
        buffer += utf8.decode(chunk, final=not chunk)
        while True:
            buffer = buffer.lstrip()
            if not buffer:
                break
            try:
                obj, end = decoder.raw_decode(buffer)
            except json.JSONDecodeError as e:
                if chunk and _incomplete(buffer):
                    break  # wait for the rest of the object
                sys.stderr.write(f"triton_aot worker: dropping malformed request: {e}\n")
                buffer = ""
                break
            buffer = buffer[end:]
            if isinstance(obj, dict):
                yield obj
            else:
                sys.stderr.write("triton_aot worker: dropping a request that is not an object\n")
        if not chunk:
            return


def _incomplete(text: str) -> bool:
    """Whether `text` could still become a complete JSON object (unbalanced braces)."""
    depth, in_string, escape = 0, False, False
    for ch in text:
        if in_string:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
    return in_string or depth > 0


def run_captured(handle: Handler, arguments: Sequence[str], sandbox_dir: str | None) -> tuple:
    """Runs one request with fds 1/2 captured; returns (exit code, captured output)."""
    cwd = os.getcwd()
    with tempfile.TemporaryFile() as capture:
        sys.stdout.flush()
        sys.stderr.flush()
        saved = os.dup(1), os.dup(2)
        saved_streams = sys.stdout, sys.stderr
        os.dup2(capture.fileno(), 1)
        os.dup2(capture.fileno(), 2)
        # Python-level streams too: they need not be backed by fds 1/2 (e.g. under pytest)
        text = open(capture.fileno(), "w", encoding="utf-8", errors="replace", buffering=1,
                    closefd=False)
        sys.stdout = sys.stderr = text
        try:
            if sandbox_dir:
                os.chdir(sandbox_dir)
            code = handle(list(arguments))
        except Exception as e:  # the handler reports its own errors; this is a last resort
            text.write(f"error: internal error in triton_aot worker: {type(e).__name__}: {e}\n")
            code = 1
        finally:
            text.flush()
            sys.stdout, sys.stderr = saved_streams
            text.close()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
            os.chdir(cwd)
        capture.seek(0)
        output = capture.read().decode("utf-8", errors="replace")
    return code, output


def serve(handle: Handler, stdin_fd: int = 0, stdout_fd: int = 1) -> int:
    """The worker loop; returns when stdin is closed."""
    protocol = os.fdopen(os.dup(stdout_fd), "w", encoding="utf-8")
    sys.stdout.flush()
    os.dup2(2, stdout_fd)
    for request in read_requests(stdin_fd):
        if request.get("cancel"):
            continue
        arguments = request.get("arguments") or []
        if not isinstance(arguments, list) or not all(isinstance(a, str) for a in arguments):
            code, output = 1, "error: WorkRequest.arguments must be a list of strings\n"
        else:
            code, output = run_captured(handle, arguments, request.get("sandboxDir") or None)
        response = {"exitCode": code, "output": output,
                    "requestId": int(request.get("requestId") or 0)}
        protocol.write(json.dumps(response) + "\n")
        protocol.flush()
    protocol.close()
    return 0
