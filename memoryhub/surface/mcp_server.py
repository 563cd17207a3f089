"""The tool registry served over MCP with the official SDK: streamable HTTP at ``/mcp``
(a Django view, so the WSGI server that serves the rest serves it too) and stdio
(``manage.py mcp``).

Over HTTP the server is stateless and answers JSON: each POST carries one message and
its bearer token, is authenticated like any API call, and gets its answer in the
response, so no session outlives a request and any worker may answer any request. The
caller is the token's user, never a user id the caller names.

The SDK is asynchronous; the tools are Django code. Over HTTP each worker thread keeps
an event loop of its own (``ThreadLoop``) and runs a request's exchange on it; a tool
call pauses that loop and runs on the request's thread, with its database connection,
as a view's code does. Over stdio the tool calls go to Django's thread for sync code
(``sync_to_async(thread_sensitive=True)``).
"""

import asyncio
import functools
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import anyio
import mcp_types as types
from asgiref.sync import sync_to_async
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from mcp.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.exceptions import MCPError
from ninja.errors import AuthenticationError, Throttled

from memoryhub.engine.errors import ApplicationError
from memoryhub.engine.llm import ChatModelError
from memoryhub.engine.toolkit import Tool, tool_registry
from memoryhub.surface.tools import tool_call, tool_list_usable
from teams.auth import bearer_secret, token_authenticate
from teams.services import Actor

INSTRUCTIONS = (
    "MemoryHub remembers for you across sessions. Each turn, call recall with the "
    "user's message and read its `## Recalled Facts`; store durable facts with "
    "memory_write; fetch whole items by id with memory_get or wiki_read."
)


class ActorGone(Exception):
    """The token stopped being valid (revoked, its user deactivated) mid-session."""


def mcp_tool(found: Tool) -> types.Tool:
    return types.Tool(
        name=found.name,
        description=found.description,
        input_schema=found.input_schema(),
        output_schema=found.output_schema(),
        annotations=types.ToolAnnotations(
            read_only_hint=found.read_only,
            destructive_hint=found.destructive,
            idempotent_hint=found.idempotent,
            open_world_hint=False,
        ),
    )


@functools.cache
def mcp_tools() -> dict[str, types.Tool]:
    """Every tool as MCP lists it, by name. Built once per process: the registry is fixed
    once the apps are loaded, and generating the JSON Schemas is most of a listing."""
    return {name: mcp_tool(found) for name, found in tool_registry().items()}


def mcp_input_schema(name: str) -> dict[str, Any] | None:
    """The input schema of the tool ``name`` (None for no such tool), which the SDK reads
    to check a call's ``Mcp-Param-*`` headers; without it the SDK lists the tools again
    for every call."""
    found = mcp_tools().get(name)
    return None if found is None else found.input_schema


def in_django_thread[T](call: Callable[[], T]) -> Awaitable[T]:
    return sync_to_async(call, thread_sensitive=True)()


def mcp_server(
    *,
    actor_of: Callable[[], Actor],
    transport: str,
    run_sync: Callable[[Callable[[], Any]], Awaitable[Any]] = in_django_thread,
) -> Server:
    """An MCP server of the tools ``actor_of()`` may call, run as that actor.
    ``actor_of`` is asked on every request, so a token revoked meanwhile stops.
    ``run_sync`` runs the Django side of a request (listing, calling) off the loop."""

    def actor() -> Actor:
        try:
            return actor_of()
        except ActorGone as exc:
            raise MCPError(code=types.INVALID_REQUEST, message=str(exc)) from None

    def listing() -> list[types.Tool]:
        tools = mcp_tools()
        return [tools[found.name] for found in tool_list_usable(actor=actor())]

    def calling(name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
        try:
            answer = tool_call(
                actor=actor(), name=name, arguments=arguments or {}, transport=transport
            )
        except (ApplicationError, ChatModelError) as exc:
            if name not in tool_registry():
                raise MCPError(code=types.INVALID_PARAMS, message=exc.message) from None
            return types.CallToolResult(
                content=[types.TextContent(text=exc.message)], is_error=True
            )
        return types.CallToolResult(
            content=[types.TextContent(text=answer.text)], structured_content=answer.data
        )

    async def on_list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=await run_sync(listing))

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return await run_sync(lambda: calling(params.name, params.arguments))

    return Server(
        "memoryhub",
        version="1",
        title="MemoryHub",
        instructions=INSTRUCTIONS,
        get_tool_input_schema=mcp_input_schema,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )


# --- Streamable HTTP ---------------------------------------------------------------------


class ThreadLoop:
    """An event loop kept for one thread, which runs a coroutine to its end on it
    (``run``). While the coroutine awaits ``call_here(fn)`` the loop stops and ``fn``
    runs on this thread with no loop running, so Django code in it (the ORM) runs as it
    does in any view. Starting a thread and a loop for every request, as ``async_to_sync``
    does, costs more than the rest of the exchange around a tool call."""

    _threads = threading.local()

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.wanted: deque[tuple[Callable[[], Any], asyncio.Future[Any]]] = deque()
        self.waiting: asyncio.Future[None] | None = None

    @classmethod
    def of_this_thread(cls) -> "ThreadLoop":
        found = getattr(cls._threads, "loop", None)
        if found is None or found.loop.is_closed():
            found = cls._threads.loop = cls()
        return found

    def __del__(self) -> None:  # the thread has ended: its loop goes with it
        if not self.loop.is_closed():
            self.loop.close()

    async def call_here(self, call: Callable[[], Any]) -> Any:
        answer = self.loop.create_future()
        self.wanted.append((call, answer))
        if self.waiting is not None and not self.waiting.done():
            self.waiting.set_result(None)
        return await answer

    def run[T](self, coroutine: Coroutine[Any, Any, T]) -> T:
        loop = self.loop
        main = loop.create_task(coroutine)
        try:
            while not main.done():
                self.waiting = loop.create_future()
                loop.run_until_complete(
                    asyncio.wait([main, self.waiting], return_when=asyncio.FIRST_COMPLETED)
                )
                while self.wanted:
                    call, answer = self.wanted.popleft()
                    if answer.cancelled():
                        continue
                    try:
                        answer.set_result(call())
                    except Exception as exc:
                        answer.set_exception(exc)
        except BaseException:
            main.cancel()
            loop.close()  # a loop stopped mid-task is not one to run the next request on
            raise
        finally:
            self.waiting = None
            self.wanted.clear()
        return main.result()


def _asgi_scope(request: HttpRequest) -> dict[str, Any]:
    headers = [
        (name.lower().encode("latin-1"), value.encode("latin-1", "replace"))
        for name, value in request.headers.items()
    ]
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.path.encode(),
        "root_path": "",
        "query_string": request.META.get("QUERY_STRING", "").encode("latin-1", "replace"),
        "headers": headers,
        "client": (request.META.get("REMOTE_ADDR", ""), 0),
        "server": (request.get_host(), 0),
    }


async def _exchange(server: Server, scope: dict[str, Any], body: bytes) -> HttpResponse:
    """One HTTP exchange with the SDK's stateless, JSON-answering transport."""
    manager = StreamableHTTPSessionManager(app=server, json_response=True, stateless=True)
    sent_body = False
    status = 500
    headers: list[tuple[bytes, bytes]] = []
    chunks: list[bytes] = []

    async def receive() -> dict[str, Any]:
        nonlocal sent_body
        if not sent_body:
            sent_body = True
            return {"type": "http.request", "body": body, "more_body": False}
        await anyio.sleep_forever()  # the client stays until the answer is sent
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status, headers
        if message["type"] == "http.response.start":
            status = message["status"]
            headers = list(message.get("headers", []))
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    async with manager.run():
        await manager.handle_request(scope, receive, send)
    response = HttpResponse(b"".join(chunks), status=status)
    for name, value in headers:
        if name.lower() not in (b"content-length", b"connection"):
            response[name.decode("latin-1")] = value.decode("latin-1")
    return response


REFUSED = -32001  # a JSON-RPC error code of the server's own range: not authorised


def _refusal(message: str, status: int) -> JsonResponse:
    """A refusal both a plain HTTP client (``detail``) and an MCP client (a JSON-RPC
    error, whose message the SDK's client raises) can read."""
    body = {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": REFUSED, "message": message},
        "detail": message,
    }
    response = JsonResponse(body, status=status)
    if status == 401:
        response["WWW-Authenticate"] = 'Bearer realm="memoryhub"'
    return response


@csrf_exempt
def mcp_view(request: HttpRequest) -> HttpResponse:
    """MCP over streamable HTTP: ``Authorization: Bearer <agent token>`` on every
    request; POST a JSON-RPC message, get its answer as JSON. There is no stream to
    open with GET and no session to end with DELETE."""
    try:
        secret = bearer_secret(request)
        if secret is None:
            return _refusal("Send 'Authorization: Bearer <agent token>'.", 401)
        token = token_authenticate(request, secret=secret)
    except Throttled as exc:
        response = _refusal(str(exc.message), 429)
        response["Retry-After"] = str(exc.wait or 60)
        return response
    except AuthenticationError as exc:
        return _refusal(str(exc.message), 401)
    if request.method != "POST":
        response = _refusal("POST JSON-RPC messages here; this server opens no streams.", 405)
        response["Allow"] = "POST"
        return response
    actor = Actor(user=token.user, token=token)
    here = ThreadLoop.of_this_thread()
    server = mcp_server(actor_of=lambda: actor, transport="mcp-http", run_sync=here.call_here)
    return here.run(_exchange(server, _asgi_scope(request), request.body))
