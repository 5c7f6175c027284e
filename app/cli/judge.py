"""`trecpool judge`: run a judge function as a model assessor against a trecpool server's batch judging API."""

from __future__ import annotations

import enum
import json

import typer

cli = typer.Typer(
    add_completion=False, pretty_exceptions_enable=False, context_settings={"help_option_names": ["-h", "--help"]}
)

TOKEN_VARIABLE = "TRECPOOL_TOKEN"


class TextOrJson(enum.StrEnum):
    """The final summary: one line of text, or one JSON document on stdout."""

    text = "text"
    json = "json"


def _fail(message: str, status: int = 1) -> typer.Exit:
    """Print an error (one line on stderr) and return the exit to raise."""
    from rich.console import Console
    from rich.markup import escape

    Console(stderr=True, soft_wrap=True, emoji=False).print(f"[red]error:[/] {escape(message)}", highlight=False)
    return typer.Exit(status)


@cli.command("judge")
def judge(
    url: str | None = typer.Option(
        None, "--url", show_default=False, help="The trecpool server, e.g. https://trecpool.example.org (required)"
    ),
    token: str | None = typer.Option(
        None,
        "--token",
        envvar=TOKEN_VARIABLE,
        show_envvar=True,
        show_default=False,
        help=f"The model assessor's token; better given in the environment variable {TOKEN_VARIABLE}, which keeps it "
        "out of the shell history and process listings. Never printed.",
    ),
    judge_spec: str = typer.Option(
        ...,
        "--judge",
        help="MODULE:FUNCTION of a judge function fn(items, **options) -> [{grade, probability}], or a built-in: "
        "simulated (app.judges.simulated:judge: labels from --option qrels=FILE with error_rate, noise, seed) or "
        "openai (app.judges.openai_chat:judge: any OpenAI-compatible chat endpoint, --option url=... model=...; its "
        "API key from TRECPOOL_JUDGE_API_KEY)",
    ),
    option: list[str] = typer.Option(
        [], "--option", "-o", metavar="KEY=VALUE", help="An option of the judge (repeat); never a secret"
    ),
    batch: int = typer.Option(10, "--batch", min=1, help="Items per pull (at most the server's max_batch)"),
    workers: int = typer.Option(1, "--workers", min=1, help="Threads, each pulling, judging and pushing its batches"),
    max_items: int | None = typer.Option(None, "--max-items", min=0, help="Stop after this many items"),
    hash_only: bool = typer.Option(
        False, "--hash-only", help="Print the configuration hash and exit (to register it before judging)"
    ),
    fmt: TextOrJson = typer.Option(
        TextOrJson.text, "--format", help="text: the summary line; json: one JSON document on stdout"
    ),
) -> None:
    """Judge every item the server hands this model assessor: pull a batch, call the judge, push its verdicts with
    the configuration hash (SHA-256 of the judge and its sorted options, printed first), until none are left.

    Pushes are idempotent, so connection errors, 5xx and 429 answers are retried with backoff."""
    from rich.console import Console
    from rich.markup import escape

    from app.judges import client as judging
    from app.judges.loading import JudgeSpecError, check_options, config_hash, load_judge, parse_options

    notes = Console(stderr=True, soft_wrap=True, emoji=False)
    try:
        options = parse_options(option)
        digest = config_hash(judge_spec, options)
        if hash_only:
            typer.echo(digest)
            return
        function = load_judge(judge_spec)
        check_options(function, options, judge_spec)
    except JudgeSpecError as exc:
        raise _fail(str(exc), 2) from None
    if not url:
        raise _fail("--url is required: the trecpool server to judge for", 2)
    if not token:
        raise _fail(f"no token: give --token or set {TOKEN_VARIABLE}", 2)
    notes.print(f"judge {escape(judge_spec)}: config hash {digest}", highlight=False)
    try:
        with judging.BatchClient(url, token) as api:
            info = api.info()
            registered = (info.get("provenance") or {}).get("config_hash")
            notes.print(
                f"assessor {escape(str(info.get('assessor')))} ({info.get('kind')}), grades 0..{info.get('max_grade')}",
                highlight=False,
            )
            if info.get("kind") not in (None, "model"):
                raise _fail(f"the token's assessor is a {info.get('kind')}, not a model assessor")
            if registered and registered != digest:
                notes.print(
                    f"[yellow]note:[/] the assessor's provenance registers config hash {escape(str(registered))}, "
                    "not this run's: ask the organiser to update it",
                    highlight=False,
                )
            limit = info.get("max_batch")
            size = min(batch, int(limit)) if isinstance(limit, int) and limit > 0 else batch
            summary = judging.run(
                api,
                function,
                options,
                digest,
                batch=size,
                workers=workers,
                max_items=max_items,
                max_grade=int(info.get("max_grade") or 1),
                report=lambda line: notes.print(escape(line), highlight=False),
            )
    except judging.JudgeClientError as exc:
        raise _fail(str(exc)) from None
    if fmt is TextOrJson.json:
        document = {
            "config_hash": digest,
            "assessor": info.get("assessor"),
            "batches": summary.batches,
            "items": summary.pulled,
            "accepted": summary.accepted,
            "unchanged": summary.unchanged,
            "retries": summary.retries,
            "seconds": round(summary.seconds, 3),
        }
        typer.echo(json.dumps(document, indent=2))
    else:
        typer.echo(summary.line())
