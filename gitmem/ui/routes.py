"""The pages of ``gitmem ui``: each route reads memory with the function the matching
command calls, and every action is a POST carrying the page's CSRF token."""

from __future__ import annotations

import hmac
from pathlib import Path
from typing import TYPE_CHECKING

import jinja2
from markupsafe import Markup
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from gitmem.agent.usage import load_usage
from gitmem.agent.usage_report import usage_by_session
from gitmem.errors import GitmemError, NotFound
from gitmem.index.tiers import Split
from gitmem.memory import trust
from gitmem.review.pending import list_sessions
from gitmem.review.render import decision_text
from gitmem.setup.workspace import list_clients
from gitmem.status import repo_status

from . import charts, pages, review

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from gitmem import MemoryRepo

TEMPLATES = jinja2.Environment(
    loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
    autoescape=True,  # everything memory holds is untrusted text
)
TEMPLATES.globals["rows"] = review.rows
TEMPLATES.globals["split_rows"] = review.split_rows
TEMPLATES.globals["shown"] = lambda v: "none" if v == () else trust.shown(v)  # as gitmem status


def _bdi(value: object) -> Markup:
    """``value`` (each of a list, comma-separated) escaped and bidi-isolated: an override
    in memory's text cannot reorder the page's own text after it."""
    items = value if isinstance(value, list | tuple) else [value]
    return Markup(", ").join(Markup("<bdi>%s</bdi>") % v for v in items)


TEMPLATES.filters["bdi"] = _bdi


def _refusal(fields: dict[str, list[str]], csrf: str, read_only: bool) -> str | None:
    """Why a form's action is not taken (403), or None."""
    if read_only:
        return "this page is read-only (--read-only)"
    if not hmac.compare_digest(fields.get("csrf", [""])[0].encode(), csrf.encode()):
        return "a form from another page"
    return None


def _start(repo: MemoryRepo, request: Request) -> pages.Start:
    q = request.query_params
    return pages.page_start(repo, q.get("skip"), q.get("before"), q.get("n"))


def build_app(repo: MemoryRepo, csrf: str, *, read_only: bool = False) -> Starlette:
    def page(
        template: str, nav: str = "", status_code: int = 200, **values: object
    ) -> HTMLResponse:
        html = TEMPLATES.get_template(template).render(
            nav=nav, csrf=csrf, read_only=read_only, **values
        )
        return HTMLResponse(html, status_code=status_code)

    def shown(
        nav: str, make: Callable[[Request], HTMLResponse]
    ) -> Callable[[Request], Awaitable[Response]]:
        async def handler(request: Request) -> Response:
            try:
                return make(request)
            except NotFound as err:  # the CLI's one-line reason
                return page(
                    "message.html", nav, 404, title="Not found", text=str(err), kind="refused"
                )
            except GitmemError as err:  # a malformed name, date or page
                return page(
                    "message.html", nav, 400, title="Refused", text=str(err), kind="refused"
                )

        return handler

    def action(
        nav: str, act: Callable[[dict[str, list[str]], Request], tuple[str, str]]
    ) -> Callable[[Request], Awaitable[Response]]:
        async def handler(request: Request) -> Response:
            form = await request.form()
            fields = {k: [str(v) for v in form.getlist(k)] for k in form}
            refused = _refusal(fields, csrf, read_only)
            if refused:
                return page("message.html", nav, 403, title="Refused", text=refused, kind="refused")
            try:
                title, text = act(fields, request)
            except GitmemError as err:
                back = str(request.url.path)
                return page(
                    "message.html",
                    nav,
                    409,
                    title="Refused",
                    text=str(err),
                    kind="refused",
                    back=back,
                )
            return page("message.html", nav, title=title, text=text, kind="done", back="/")

        return handler

    def one(fields: dict[str, list[str]], key: str) -> str:
        return (fields.get(key) or [""])[0]

    def overview(request: Request) -> HTMLResponse:
        st = repo_status(repo)
        return page(
            "overview.html",
            "Overview",
            st=st,
            split=Split.from_json(st.index_budget.get("split")),
            root=str(repo.root),
            cards=pages.cards(repo),
            clients=list_clients(),  # each with its last edit, as `gitmem clients`
        )

    def sessions(request: Request) -> HTMLResponse:
        return page("pending.html", "Review", sessions=list_sessions(repo))

    def session(request: Request) -> HTMLResponse:
        sid = request.path_params["sid"]
        split = request.query_params.get("view") == "split"
        return page("session.html", "Review", sid=sid, s=review.session(repo, sid), split=split)

    def decide(fields: dict[str, list[str]], request: Request) -> tuple[str, str]:
        sid = request.path_params["sid"]
        done = review.decide(
            repo,
            sid,
            one(fields, "action"),
            fields.get("hunk", []),
            fields.get("commit", []),
            one(fields, "tip"),
        )
        return "Decided", decision_text(done)

    def history(request: Request) -> HTMLResponse:
        return page("history.html", "History", entries=pages.history(repo))

    def confirm(request: Request) -> HTMLResponse:
        target = request.path_params["target"]
        return page(
            "revert.html", "History", target=target, undone=pages.revert_preview(repo, target)
        )

    def revert(fields: dict[str, list[str]], request: Request) -> tuple[str, str]:
        return "Reverted", pages.revert(repo, request.path_params["target"])

    def card_list(request: Request) -> HTMLResponse:
        return page("cards.html", "Cards", cards=pages.cards(repo))

    def card(request: Request) -> HTMLResponse:
        name = request.path_params["name"]
        return page(
            "card.html", "Cards", name=name, c=pages.card(repo, name, _start(repo, request))
        )

    def card_section(request: Request) -> HTMLResponse:
        name, sid = request.path_params["name"], request.path_params["sid"]
        got = pages.section(repo, name, sid, _start(repo, request))
        return page("section.html", "Cards", name=name, sid=sid, p=got)

    def index(request: Request) -> HTMLResponse:
        text, size = pages.index_block(repo)
        return page("index.html", "Cards", text=text, size=size, st=repo_status(repo))

    def search(request: Request) -> HTMLResponse:
        q, as_of = request.query_params.get("q", ""), request.query_params.get("as_of", "")
        hits = pages.search(repo, q, as_of) if q.strip() else None
        return page("search.html", "Search", q=q, as_of=as_of, hits=hits)

    def show(request: Request) -> HTMLResponse:
        ref = request.query_params.get("ref", "")
        return page("show.html", "Search", ref=ref, text=pages.opened(repo, ref))

    def costs(request: Request) -> HTMLResponse:
        records = load_usage(repo)
        sid = request.query_params.get("session")
        one_session = charts.session_costs(records, sid) if sid else None
        reports = usage_by_session(records)
        return page(
            "costs.html",
            "Costs",
            reports=reports,
            daily=charts.daily_costs(records),
            one=one_session,
        )

    routes = [
        Route("/", shown("Overview", overview)),
        Route("/review", shown("Review", sessions)),
        Route("/review/{sid}", shown("Review", session), methods=["GET"]),
        Route("/review/{sid}", action("Review", decide), methods=["POST"]),
        Route("/history", shown("History", history)),
        Route("/revert/{target}", shown("History", confirm), methods=["GET"]),
        Route("/revert/{target}", action("History", revert), methods=["POST"]),
        Route("/cards", shown("Cards", card_list)),
        Route("/cards/{name}", shown("Cards", card)),
        Route("/cards/{name}/{sid}", shown("Cards", card_section)),
        Route("/index", shown("Cards", index)),
        Route("/search", shown("Search", search)),
        Route("/show", shown("Search", show)),
        Route("/costs", shown("Costs", costs)),
        Mount("/static", StaticFiles(directory=Path(__file__).parent / "static")),
    ]
    return Starlette(routes=routes)
