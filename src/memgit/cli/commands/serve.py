"""memgit serve: every drive under ROOT over git's smart HTTP, with tokens, /metrics and a
dashboard (docs/serve.md); --create OWNER/DRIVE makes a drive there and exits."""

from __future__ import annotations

from pathlib import Path

import click

from memgit.cli.common import ctx_directory
from memgit.errors import UsageError
from memgit.plugins import install_command
from memgit.safe_text import printable
from memgit.serve.paths import check_root, drive_dir, list_drives, new_drive_dir, require_name


def _root(ctx: click.Context, root: str | None, *, make: bool = False) -> Path:
    """The served root; with ``make`` (``--create``) it is made first, parents too, as
    ``git init`` makes the folder it is given."""
    base = Path(ctx_directory(ctx) or ".")
    folder = (base / root) if root else base
    if make:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"cannot make the folder {folder}: {exc.strerror}",
                             "name a folder that can hold OWNER/DRIVE.git drives") from exc
    return check_root(folder)


def _create(ctx: click.Context, root: str | None, texts: tuple[str, ...]) -> int:
    from memgit.drives.create import create_drive

    names = [require_name(text) for text in texts]  # all checked before anything is made
    folder = _root(ctx, root, make=True)
    for name in names:
        if drive_dir(folder, name) is not None:
            raise UsageError(f"there is a drive {name} already", "nothing to do")
        target = new_drive_dir(folder, name)
        create_drive(target, bare=True, title=f"Memory: {name}")
        click.echo(f"Created drive {name} in {target} (hooks installed); serve it with: "
                   f"memgit serve {folder}")
    return 0


def _hook_problems(root: Path) -> list[str]:
    """Drives whose memgit hooks are missing or not current (their pushes go unjudged)."""
    from memgit.githooks.install import server_status

    out = []
    for name in list_drives(root):
        problems = server_status(root / f"{name}.git").problems
        if problems:
            out.append(f"{name}: {', '.join(problems)}")
    return out


@click.command("serve")
@click.argument("root", required=False)
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (not a loopback one only once tokens exist).")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(0, 65535))
@click.option("--create", "create", multiple=True, metavar="OWNER/DRIVE",
              help="Create the bare drive ROOT/OWNER/DRIVE.git (hooks installed) and exit.")
@click.option("--timeout", default=30.0, show_default=True, type=click.FloatRange(0.1, 3600),
              help="Seconds a client may send or read nothing before it is cut off.")
@click.option("--max-body", default=256, show_default=True, type=click.IntRange(1, 1 << 20),
              metavar="MIB", help="Largest request body (a push's pack), in MiB.")
@click.option("--log", "log_file", type=click.Path(dir_okay=False), default=None,
              help="Append the access log to FILE (default: standard error).")
@click.pass_context
def command(ctx: click.Context, root: str | None, host: str, port: int,
            create: tuple[str, ...], timeout: float, max_body: int,
            log_file: str | None) -> int:
    """Serve every drive ROOT/OWNER/DRIVE.git (ROOT: default the current folder) over
    git's smart HTTP, with drive-scoped tokens (memgit token), /metrics and a read-only
    dashboard."""
    if create:
        return _create(ctx, root, create)
    folder = _root(ctx, root)
    try:
        from memgit.serve import server
    except ImportError as exc:
        raise UsageError(f"memgit serve needs its web server ({exc.name} is missing)",
                         install_command("serve")) from exc
    cfg = server.config(folder, host, port, idle=timeout, max_body=max_body * 1024 * 1024,
                        log_file=Path(log_file).absolute() if log_file else None)
    drives = list_drives(folder)
    for problem in _hook_problems(folder):
        click.echo(printable(f"memgit serve: warning: {problem} (memgit install-hooks "
                             "--server fixes it)"), err=True)
    sock = server.listen(host, port)
    port = sock.getsockname()[1]  # --port 0: the one the system chose
    shown = f"[{host}]" if ":" in host else host
    click.echo(f"memgit serve: {len(drives)} drive{'s' * (len(drives) != 1)} under {folder} "
               f"at http://{shown}:{port}/ (clone: git clone http://{shown}:{port}/OWNER/"
               "DRIVE.git; Ctrl-C stops)", err=True)
    server.serve(cfg, sock)
    return 0
