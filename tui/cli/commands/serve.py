"""``goldpan serve``: a labeling session for a team, in their browsers."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from tui.cli.commands.common import UsageError, err, open_workspace, out, pool_stale
from tui.literal import literal


def _people(args: argparse.Namespace) -> list[tuple[str, str]]:
    from engine.names import check_person_name

    people: dict[str, str] = {}
    for role, names in (
        ("adjudicator", args.adjudicator),
        ("annotator", args.annotator),
        ("viewer", args.viewer),
    ):
        for name in names:
            check_person_name(name, f"--{role}")  # a tab starts for every name taken
            if name in people and people[name] != role:
                raise UsageError(f"{name!r} is given as both {people[name]} and {role}")
            people.setdefault(name, role)
    return list(people.items())


def cmd_serve(args: argparse.Namespace) -> None:
    """Print each person's link, then serve until ctrl+c."""
    from tui.serve.served import Served
    from tui.serve.server import LOOPBACK, make_server, run
    from tui.serve.tokens import ServeError, TokenBook, link

    path = Path(args.workspace)
    try:
        if args.links:
            book = TokenBook(path.absolute())
            if not book.serving:
                raise UsageError(
                    f"no links for {path} yet: start `goldpan serve {path} --annotator NAME`"
                )
            _print_links(book.url, book.active(), link)
            return
        people = _people(args)
        book = TokenBook(path.absolute())
        if not people:  # the same people as last time (a links file may be older than the rule)
            from engine.names import check_person_name

            people = [(check_person_name(p.name, p.role), p.role) for p in book.active()]
        if not people:
            raise UsageError("name at least one person: --annotator NAME (repeatable)")
        with open_workspace(str(path)) as ws:
            labelers = [n for n, role in people if role != "viewer"]
            if labelers and ws.readonly:
                raise UsageError(
                    f"{path} is read-only ({ws.readonly_reason}): annotators could not save "
                    "labels; serve it to --viewer names only, or make it writable"
                )
            # the work handed out follows the judging queue, which reads cached rankings
            from engine.retrieve import DEFAULT_DEPTH

            pool_stale(ws, None, DEFAULT_DEPTH, quiet=False)
        _check_free(args.host, args.port)
        given = book.give(people, new_tokens=args.new_tokens)
        base = (args.public_url or f"http://{_url_host(args.host)}:{args.port}").rstrip("/")
        book.url = base
        book.save()
    except ServeError as exc:
        raise UsageError(str(exc)) from None
    if args.host not in LOOPBACK:
        err.print(
            literal(
                f"goldpan: warning: listening on {args.host}: anyone who can reach this "
                "address can try links, and traffic (tokens and labels) is unencrypted "
                "unless a TLS reverse proxy is in front (see docs/team.md). If people reach "
                "this machine by another name than the links show, give --public-url."
            ),
            style="yellow",
        )
    _print_links(base, given, link)
    err.print(literal(f"links are kept in {book.path} (`goldpan serve {path} --links`)"))
    served = Served(per_question=args.per_question, lease_seconds=args.lease)
    server = make_server(
        path.absolute(),
        given,
        host=args.host,
        port=args.port,
        served=served,
        public_url=base,
        start_at_once=args.start_at_once,
    )
    try:
        run(server)
    except OSError as exc:
        raise UsageError(f"cannot listen on {args.host}:{args.port} ({exc.strerror})") from None


def _check_free(host: str, port: int) -> None:
    """Refuse a port already in use before any link is printed."""
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise UsageError(f"--host {host}: {exc.strerror or exc}") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            raise UsageError(
                f"cannot listen on {host}:{port} ({exc.strerror}); choose another --port"
            ) from None


def _url_host(host: str) -> str:
    """The host part of a link: this machine's name when listening on every address."""
    if host in ("0.0.0.0", "::", ""):
        import socket

        host = socket.gethostname()
    return f"[{host}]" if ":" in host else host


def _print_links(base: str, people: list[Any], link: Any) -> None:
    for p in people:
        out.print(literal(f"{p.name} ({p.role}): {link(base, p)}"))
