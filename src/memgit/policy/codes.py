"""The stable codes of the policy's rules, each with its name and one-line hint.

A data table; docs/rules.md lists every code (a test checks it). Codes never change
meaning once published.
"""

from __future__ import annotations

# code -> (name, hint). The codes are stable: tools and docs refer to them.
RULES: dict[str, tuple[str, str]] = {
    # entries
    "MG101": ("source-scheme", "use https://..., /?session=ID, TOOL:session/ID, "
              "TOOL:observation/ID, imported:TOOL/PATH#LN or imported:unknown (profile amr "
              "allows any source but javascript:, data:, vbscript:, file:)"),
    "MG102": ("date-invalid", "write added as a real date YYYY-MM-DD"),
    "MG103": ("id-duplicate", "give each entry its own id (memgit remember stamps new ones)"),
    "MG104": ("metadata-malformed", "end the line with [key: value; key: value], keys in "
              "lowercase, values without ; [ ]"),
    "MG105": ("entry-multiline", "keep each entry on one bullet line (memgit import joins "
              "wrapped lines into one entry)"),
    "MG106": ("id-invalid", "ids use letters, digits, '.', '_', ':' and '-' (at most 128)"),
    "MG107": ("value-invalid", "use an allowed value for this key"),
    "MG108": ("line-repeated", "the same id-less line twice is one fact written twice: "
              "delete one copy (memgit forget ID removes every copy)"),
    "MG109": ("source-required", "this drive's entries name their agent (kind team, project, "
              "swarm or require_source): add [source: TOOL:session/ID]"),
    # files
    "MG201": ("file-type", "a drive holds Markdown (.md) files only; use profile: amr for others"),
    "MG202": ("symlink", "replace the symlink by a regular file"),
    "MG203": ("submodule", "remove the submodule; a drive holds its own files"),
    "MG204": ("executable", "git update-index --chmod=-x PATH (mode must be 100644)"),
    "MG205": ("file-size", "split the file into topic files below the limit"),
    "MG206": ("drive-size", "remove or shorten entries, or raise limits.drive_bytes"),
    "MG207": ("file-count", "merge small topic files, or raise limits.files"),
    "MG208": ("path-invalid", "use a relative path without '..', '.git' or control characters"),
    "MG209": ("path-nfc", "rename the file to its NFC-normalised form"),
    "MG210": ("path-case-collision", "rename one of the files; paths must differ in more "
              "than letter case"),
    "MG211": ("path-length", "shorten the path to at most 255 bytes"),
    "MG212": ("file-folder-collision", "rename the file or the folder"),
    "MG213": ("reserved-path", "questions.md is written by memgit ask/answer/resolve; twin/ and "
              "imports/ by server-side memgit; choose another topic"),
    "MG214": ("path-invisible", "rename it without invisible characters (zero-width, bidi "
              "controls, soft hyphen, variation selectors)"),
    "MG290": ("near-limit", "the drive is close to a limit; consolidate before it is reached"),
    "MG291": ("over-cap", "the drive holds more or older entries than its caps allow: run "
              "memgit compact (or raise limits.max_entries / max_age_days)"),
    # content
    "MG301": ("utf8-invalid", "save the file as UTF-8 text"),
    "MG302": ("nul-byte", "remove the NUL byte; a drive holds text only"),
    "MG303": ("raw-html", "write Markdown instead of HTML, or put it in `code`"),
    "MG304": ("image", "link to the image with a normal link instead of embedding it"),
    "MG305": ("transcript", "store the facts learned, not the transcript or log itself"),
    "MG306": ("conflict-marker", "resolve the merge conflict and remove the markers"),
    "MG307": ("line-break", "end lines with LF or CRLF only: a lone CR, U+2028/U+2029, form "
              "feed or vertical tab starts a new line for some readers and not for others"),
    "MG308": ("control-character", "remove the control character: an escape sequence or a "
              "bell runs in the terminal of whoever reads the file with cat or git, and can "
              "hide text an agent still reads"),
    # secrets
    "MG401": ("secret", "remove the credential, rotate it, and store where it lives instead"),
    "MG402": ("secret-in-name", "rename the file or folder without the credential, and "
              "rotate it"),
    "MG403": ("secret-in-commit", "rewrite the commit without the credential in its message, "
              "author or committer (git commit --amend, git rebase -i), and rotate it"),
    # structure
    "MG501": ("memory-missing", "make the folder a drive in place with memgit init --adopt "
              "(keeps its files and history), or bring its memory into a new drive with "
              "memgit import"),
    "MG502": ("index-stale", "run: memgit lint --fix (regenerates the ## Index of MEMORY.md)"),
    "MG503": ("link-missing", "create the linked file or fix the [[path]]"),
    "MG504": ("link-md-suffix", "omit .md in [[path]] links to Markdown files"),
    "MG505": ("memory-size", "keep MEMORY.md short: move entries to topic files"),
    # pushes
    "MG601": ("protected-path", "twin/ is written by server-side memgit only, the forge's CI "
              "files (ci_files) by the drive's admin; drop the change"),
    "MG602": ("branch", "push to the drive's main branch only (working memory's "
                        "refs/memgit/working goes through memgit sync)"),
    "MG603": ("ref-delete", "deleting refs is not allowed on a drive"),
    "MG604": ("non-fast-forward", "fetch, rebase or run memgit sync, then push without --force"),
    "MG605": ("too-many-commits", "push in smaller batches"),
    "MG606": ("purged-id", "this entry was purged from the drive; it may not return"),
    "MG607": ("purged-text", "this text was purged from the drive; it may not return"),
    "MG608": ("object-missing", "the push references objects it does not contain; push again"),
    "MG609": ("server-error", "ask the drive's admin to check the server-side setup"),
    "MG610": ("purge-running", "a purge is rewriting this drive's history; push again when it "
              "is done (memgit sync replays your work onto the new history)"),
    "MG611": ("push-too-large", "push in smaller batches, or raise limits.push_bytes"),
    # working memory (docs/working-memory.md)
    "MG701": ("working-key", "use a key of 1 to 256 characters without control characters "
              "or line breaks"),
    "MG702": ("working-json", "give the value as JSON (a string needs quotes: '\"text\"'), "
              "or pass plain text without --json"),
    "MG703": ("working-size", "keep a value under 64 KiB of JSON: store the rest as entries "
              "or split it over several keys"),
    "MG704": ("working-scope", "name the agent and team with letters, digits, '.', '_' and "
              "'-' (--agent, --team, MEMGIT_AGENT, MEMGIT_TEAM)"),
    "MG705": ("working-layout", "change working memory only through memgit set and unset"),
    "MG612": ("proposal-required", "this drive's autonomy rules let this writer only propose "
              "here: write it as a proposal (memgit remember, or [status: proposed] on the "
              "line) and a person approves it (memgit approve ID)"),
    "MG613": ("autonomy-refused", "this drive's autonomy rules refuse this write from this "
              "writer; ask the drive's owner (memgit.yaml, autonomy:)"),
}
