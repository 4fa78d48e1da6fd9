"""importing/readers.py and markdown.py: what each tool's files become, on real samples."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from memgit.importing.markdown import (
    ENTRY,
    STRUCTURE,
    VERBATIM,
    is_label,
    read_markdown,
    subject_of,
)
from memgit.importing.plan import Item, build_plan, imported_source
from memgit.importing.readers import detect, file_added, front_matter, read_mem0

REALWORLD = Path(__file__).parents[1] / "data" / "realworld"


def at(plan_items: list[Item], path: str, line: int) -> Item:
    return next(i for i in plan_items if i.path == path and i.line == line)


@pytest.mark.parametrize("sample", sorted(p for p in REALWORLD.glob("*/*") if p.is_dir()),
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_auto_detection_names_the_tool(sample: Path) -> None:
    source = next(sample.glob("*.json")) if sample.parent.name == "mem0" else sample
    assert detect(source) == sample.parent.name


def test_claude_code_front_matter_is_metadata_and_wrapped_lines_join() -> None:
    plan = build_plan(REALWORLD / "claude-code" / "episteme")
    front = at(plan.items, "testing-small-batches.md", 1)
    assert (front.action, front.reason, front.end) == (STRUCTURE, "front matter", 6)
    assert not any(i.action == ENTRY and i.path == "browser-setup.md" and i.line < 7
                   for i in plan.items)
    prose = at(plan.items, "testing-small-batches.md", 8)
    assert (prose.action, prose.end) == (ENTRY, 10)
    assert prose.text.startswith("When live-testing the Episteme pipeline, run 1-3 articles, "
                                 "not a full pass — e.g. `POST")
    item = at(plan.items, "browser-setup.md", 13)
    assert item.end == 16 and "not 1280 — narrow centered columns" in item.text
    assert item.context == "Implications when judging how a page looks for them"
    assert item.source == "imported:claude-code/browser-setup.md#L13"


def test_a_yaml_tag_list_never_becomes_entries() -> None:
    plan = build_plan(REALWORLD / "basic-memory" / "docs-examples")
    texts = {i.text for i in plan.entries()}
    assert "branding" not in texts and "design" not in texts and texts
    front = at(plan.items, "visual-identity.md", 1)
    assert (front.action, front.end) == (STRUCTURE, 8)


def test_nested_items_keep_their_parents_subject() -> None:
    plan = build_plan(REALWORLD / "cline" / "csv-date-expander")
    path = "memory-bank/activeContext.md"
    assert at(plan.items, path, 5).text == "**CLIツールの機能見直し:**"
    assert at(plan.items, path, 6).text == (
        "CLIツールの機能見直し: 標準入力からのCSVデータ受け取り、標準出力への処理結果出力を"
        "デフォルト動作としました。")
    assert at(plan.items, path, 6).context == "アクティブコンテキスト > 現在の作業内容"
    # a wrapped nested item: continuation lines joined with one space
    wrapped = at(plan.items, path, 17)
    assert wrapped.end == 18
    assert wrapped.text.endswith("`--version` オプションを追加・変更しました。")


def test_fenced_code_inside_a_list_item_is_verbatim() -> None:
    plan = build_plan(REALWORLD / "cline" / "csv-date-expander")
    code = at(plan.items, "memory-bank/techContext.md", 33)
    assert (code.action, code.reason, code.end) == (VERBATIM, "code block", 39)
    inside = [i for i in plan.items if i.path == "memory-bank/techContext.md"
              and 33 < i.line <= 39]
    assert inside == []


def test_tables_html_and_non_markdown_files_are_verbatim() -> None:
    plan = build_plan(REALWORLD / "plain" / "portfolio")
    html = at(plan.items, "AGENTS.md", 1)
    assert (html.action, html.reason) == (VERBATIM, "HTML block")
    tables = [i for i in plan.items if i.reason == "table"]
    assert tables and all(i.action == VERBATIM for i in tables)
    amr = build_plan(REALWORLD / "amr" / "memory-joe")
    sql = at(amr.items, "billing/count_paying_customers.sql", 1)
    assert (sql.action, sql.reason, sql.end) == (VERBATIM, "not Markdown", 6)


def test_amr_entries_keep_their_metadata_and_the_index_is_structure() -> None:
    plan = build_plan(REALWORLD / "amr" / "memory-joe")
    deadline = at(plan.items, "team_structure.md", 2)
    assert deadline.text == "Payments and website share a 2026-10-15 launch deadline"
    assert (deadline.source, deadline.added) == ("https://example.com/sessions/102",
                                                 "2026-09-03")
    links = [i for i in plan.items if i.path == "MEMORY.md" and i.reason == "index link"]
    assert [i.line for i in links] == [7, 8, 9]


def test_basic_memory_relations_keep_the_note_title() -> None:
    plan = build_plan(REALWORLD / "basic-memory" / "fixtures")
    relation = at(plan.items, "people/ada-lovelace.md", 20)
    assert relation.text == "Ada Lovelace collaborated_with [[Charles Babbage]]"
    observation = at(plan.items, "people/ada-lovelace.md", 14)
    assert observation.text == "[born] 1815"
    assert observation.context == "Ada Lovelace > Observations"


def test_openclaw_daily_notes_date_their_entries() -> None:
    plan = build_plan(REALWORLD / "openclaw" / "clawdbot")
    daily = [i for i in plan.entries() if i.path == "memory/2026-01-29.md"]
    assert daily and {i.added for i in daily} == {"2026-01-29"}
    assert all(i.topic == "memory/2026-01-29.md" for i in daily)
    lesson = at(plan.items, "memory/2026-01-29.md", 52)
    assert lesson.action == ENTRY  # a bold sentence is a fact, not a label
    assert {i.added for i in plan.entries() if i.path == "MEMORY.md"} == {""}


def test_letta_blocks_keep_their_paths_even_a_note_about_transcription() -> None:
    plan = build_plan(REALWORLD / "letta" / "emmabot")
    assert at(plan.items, "system/persona.md", 1).reason == "front matter"
    # the drive profile reads "transcript" as a word, so this note keeps its name
    kept = {i.topic for i in plan.entries()
            if i.path == "reference/gotchas/audio-transcription.md"}
    assert kept == {"reference/gotchas/audio-transcription.md"}
    assert {i.topic for i in plan.entries() if i.path == "system/persona.md"} == \
        {"system/persona.md"}


def test_a_topic_named_as_a_transcript_is_renamed(tmp_path: Path) -> None:
    (tmp_path / "meeting-transcript.md").write_text("- The launch moved to May\n")
    plan = build_plan(tmp_path, "plain")
    assert {i.topic for i in plan.entries()} == {"meeting-transkript.md"}


def test_mem0_memories_point_at_their_json_lines() -> None:
    path = REALWORLD / "mem0" / "langchain-tools" / "get_all.json"
    text = path.read_text(encoding="utf-8")
    reading = read_mem0("get_all.json", text)
    entries = [p for p in reading.pieces if p.action == ENTRY]
    memories = [m["memory"] for m in json.loads(text)["results"]]
    assert [p.text for p in entries] == memories
    lines = text.splitlines()
    assert all('"memory"' in lines[p.line - 1] for p in entries)
    plan = build_plan(path)
    assert {i.topic for i in plan.entries()} == {"mem0/alex.md"}
    assert {i.added for i in plan.entries()} == {"2024-11-27"}
    group = build_plan(REALWORLD / "mem0" / "group-chat" / "get_all.json")
    assert sorted(i.topic for i in group.entries()) == ["mem0/alice.md", "mem0/bob.md",
                                                         "mem0/charlie.md"]


def test_subjects_labels_and_dates() -> None:
    assert subject_of("**Environment**: bwrap required, MCP URL is set") == "Environment"
    assert subject_of("Name: Erbing") == "Name"
    assert subject_of("Support for additional blockchains (Solana, Flow, etc.)") == \
        "Support for additional blockchains (Solana, Flow, etc.)"
    assert subject_of("word " * 30).endswith("…")
    assert is_label("**経費:**") and is_label("Implications when judging how a page looks:")
    assert not is_label("**Why:** The watchers exist to catch quality issues.")
    assert not is_label("**セッションリセット時にmaster-context.md、fy26を読まなかった**")
    assert file_added("memory/2026-03-18.md", {}) == "2026-03-18"
    assert file_added("notes.md", {"created": "2025-10-24T10:00:00Z"}) == "2025-10-24"
    assert front_matter("---\ntitle: [unclosed\n---\n") == {}


def test_sources_are_encoded_so_they_stay_one_metadata_value() -> None:
    assert imported_source("openclaw", "Archive/2026-01-17 18.md", 3) == \
        "imported:openclaw/Archive/2026-01-17%2018.md#L3"
    assert imported_source("x", "a;b[c].md", 1) == "imported:x/a%3Bb%5Bc%5D.md#L1"


def test_every_piece_of_a_hostile_document_is_accounted_for() -> None:
    text = ("---\ntags:\n- a\n---\n# T\n\n- ok [source: javascript:alert(1)]\n"
            "- ![x](y.png)\n<div>\n- html\n</div>\n\n    - indented code\n\n| a |\n|---|\n")
    pieces = read_markdown(text)
    covered = sorted(n for p in pieces for n in range(p.line, p.end + 1))
    assert covered == list(range(1, text.count("\n") + 1))
    assert [(p.line, p.action) for p in pieces if p.action != STRUCTURE] == [
        (7, ENTRY), (8, VERBATIM), (9, VERBATIM), (13, VERBATIM), (15, VERBATIM)]
    assert pieces[1].meta == {} and [p.meta for p in pieces if p.line == 7] == [
        {"source": "javascript:alert(1)"}]


def test_open_metadata_of_other_amr_writers_survives_the_drive_profile(tmp_path: Path) -> None:
    from memgit.drives.create import create_drive
    from memgit.git.repository import open_drive
    from memgit.importing.apply import apply_plan

    source = tmp_path / "amr"
    source.mkdir()
    (source / "MEMORY.md").write_text(
        "# Memory\n\n"
        "- Prefers tea [kind: preference; source: thread/ab12cd34#m9]\n"
        "- Ship the beta [status: done; parent: the launch plan; source: note/n-17]\n"
        "- Click here [source: javascript:alert(1); id: m-01jd3xk8q7c9v2n4r6t8w0y1z3]\n"
        "\n## Index\n", encoding="utf-8")
    plan = build_plan(source)
    assert plan.tool == "amr"
    tea = at(plan.items, "MEMORY.md", 3)
    assert (tea.source, tea.meta) == ("thread/ab12cd34#m9", {"orig-kind": "preference"})
    beta = at(plan.items, "MEMORY.md", 4)
    assert beta.meta == {"orig-status": "done", "orig-parent": "the launch plan"}
    drive = create_drive(tmp_path / "drive", bare=False)
    result = apply_plan(open_drive(drive), plan)
    assert "m-01jd3xk8q7c9v2n4r6t8w0y1z3" in result.created
    memory = (drive / "MEMORY.md").read_text(encoding="utf-8")
    # the drive profile's source is the import's provenance; another writer's own
    # source is kept beside it, a dangerous one is dropped
    assert "javascript:" not in memory
    assert "- Prefers tea [source: imported:amr/MEMORY.md#L3; added: " in memory
    assert "orig-source: thread/ab12cd34#m9; orig-kind: preference; context: Memory]" in memory
    assert "- Click here [source: imported:amr/MEMORY.md#L5; added: " in memory
    assert "id: m-01jd3xk8q7c9v2n4r6t8w0y1z3;" in memory


# --- agent instruction files and Obsidian vaults ----------------------------------------------


@pytest.mark.parametrize(("name", "tool"), [("GEMINI.md", "gemini"), ("AGENTS.md", "agents"),
                                            (".cursorrules", "cursor"), ("x.mdc", "cursor"),
                                            (".windsurfrules", "windsurf"),
                                            ("copilot-instructions.md", "copilot"),
                                            ("notes.md", "plain")])
def test_a_single_file_is_detected_by_its_name(tmp_path: Path, name: str, tool: str) -> None:
    (tmp_path / name).write_text("- One fact\n", encoding="utf-8")
    assert detect(tmp_path / name) == tool


def test_cursor_rules_keep_where_they_apply_and_lose_their_leading_dots() -> None:
    plan = build_plan(REALWORLD / "cursor" / "nextjs-app-router")
    folder = at(plan.items, ".cursor/rules/next-js-folder-structure.mdc", 5)
    assert folder.action == ENTRY and folder.meta == {"applies-to": "app/**/*.*"}
    assert folder.topic == "cursor/rules/next-js-folder-structure.md"
    assert {i.topic for i in plan.items if i.path == ".cursorrules" and i.topic} == \
        {"cursorrules.md"}
    voice = build_plan(REALWORLD / "cursor" / "voice-pt-ai")
    # an empty globs: applies nowhere in particular: no key
    assert all("applies-to" not in i.meta for i in voice.entries()
               if i.path == ".cursor/rules/001-project-overview.mdc")


def test_in_a_project_only_the_tools_own_files_are_read(tmp_path: Path) -> None:
    project = tmp_path / "app"
    shutil.copytree(REALWORLD / "copilot" / "awesome-copilot", project)
    (project / "README.md").write_text("- Run npm test before pushing\n", encoding="utf-8")
    (project / "src").mkdir()
    (project / "src" / "main.py").write_text("print('hi')\n", encoding="utf-8")
    plan = build_plan(project)
    assert plan.tool == "copilot"
    assert {i.path for i in plan.items} == {
        ".github/copilot-instructions.md", ".github/instructions/localization.instructions.md",
        ".github/instructions/nextjs-tailwind.instructions.md",
        ".github/instructions/playwright-python.instructions.md"}
    assert plan.not_read["count"] == 2 and set(plan.not_read["first"]) == {"README.md",
                                                                           "src/main.py"}
    scoped = [i for i in plan.entries()
              if i.path == ".github/instructions/nextjs-tailwind.instructions.md"]
    assert scoped and {i.meta.get("applies-to") for i in scoped} == {"**/*.tsx, **/*.ts, "
                                                                     "**/*.jsx, **/*.js, "
                                                                     "**/*.css"}


def test_windsurf_memories_folder_is_read_whole() -> None:
    plan = build_plan(REALWORLD / "windsurf" / "memories")
    assert plan.tool == "windsurf" and not plan.not_read
    assert {f["path"] for f in plan.files} == {
        "global_rules.md", *(f"guidelines/{p.name}" for p in
                             (REALWORLD / "windsurf" / "memories" / "guidelines").iterdir())}
    rules = build_plan(REALWORLD / "windsurf" / "focus-node")
    assert {i.topic for i in rules.entries()} == {"windsurfrules.md"}


def test_gemini_memories_and_imports(tmp_path: Path) -> None:
    plan = build_plan(REALWORLD / "gemini" / "millenniumos")
    facts = plan.entries()
    assert len(facts) == 3 and {i.context for i in facts} == {"Gemini Added Memories"}
    home = tmp_path / "gemini"
    shutil.copytree(REALWORLD / "gemini" / "gemini-cli", home)
    main = home / "GEMINI.md"
    main.write_text(main.read_text(encoding="utf-8") + "\n@./packages/cli/GEMINI.md\n",
                    encoding="utf-8")
    imported = build_plan(home)
    last = [i for i in imported.items if i.path == "GEMINI.md"][-1]
    assert (last.path, last.action, last.reason) == ("GEMINI.md", STRUCTURE,
                                                     "import of another file")


def test_obsidian_links_resolve_to_topics_and_attachments_are_left_out() -> None:
    plan = build_plan(REALWORLD / "obsidian" / "help")
    assert plan.tool == "obsidian"
    embed = at(plan.items, "Linking notes and files/Embed files.md", 13)
    assert "[[Linking notes and files/Internal links|Internal link]]" in embed.text
    callout = at(plan.items, "Linking notes and files/Embed files.md", 15)
    assert callout.text.startswith("Tip: Drag and drop embed")
    block = at(plan.items, "Linking notes and files/Internal links.md", 13)
    assert block.text.endswith("create a network of knowledge.")  # the block id dropped
    kinds = {i.reason for i in plan.items if i.action == STRUCTURE and "embedded" in i.reason}
    assert kinds == {"embedded note (imported as its own topic)",
                     "embedded attachment (left out)"}
    vault = build_plan(REALWORLD / "obsidian" / "kepano")
    attachments = [i for i in vault.items if i.path.endswith(".base")]
    assert {(i.action, i.line) for i in attachments} == {(VERBATIM, 0)}
    assert {o["item"] for o in vault.left_out} == {"Templates/Bases/Books.base:0",
                                                   "Templates/Bases/Daily.base:0"}
    assert vault.not_read["count"] == 3  # .obsidian/ settings
    meeting = at(vault.items, "Notes/2023-09-12 Meeting with Steph.md", 15)
    assert meeting.text == ("Discussed the book [[References/Out of Control|Out of Control]] "
                            "on the topic of [[Emergence]]")  # no such note: left as it was
