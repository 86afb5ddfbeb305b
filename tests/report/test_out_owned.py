"""A report folder given with --out may be the user's: modelcost replaces only the files it wrote there (an
earlier run's report), never a file of the user's at one of the report's names, and leaves every other file
alone (issue 24)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.report import test_report_data as data
from modelcost.cli import app
from modelcost.core.errors import ModelcostError
from modelcost.report.folder import write_report_folder

SAMPLE = Path(__file__).resolve().parents[2] / "sample_models" / "resnet_tiny.onnx"
USERS = {"report.md": "my own notes\n", "plots/latency.png": "my own plot\n", "notes.txt": "keep\n",
         "plots/diagram.png": "mine\n"}


def _plant(folder: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)


def test_a_file_of_the_users_at_a_report_name_is_not_replaced(tmp_path: Path) -> None:
    out = tmp_path / "mine"
    _plant(out, USERS)
    with pytest.raises(ModelcostError, match=r"cannot write the report into .*mine: report.md, plots/latency.png "
                                             r"there were not written by modelcost"):
        write_report_folder(data.run(), out)
    for rel, text in USERS.items():
        assert (out / rel).read_text() == text
    assert not (out / "report.json").exists()  # nothing written: the report would be half the user's


def test_an_earlier_report_is_replaced_and_the_users_other_files_stay(tmp_path: Path) -> None:
    out = tmp_path / "mine"
    _plant(out, {"notes.txt": "keep\n", "plots/diagram.png": "mine\n"})
    write_report_folder(data.run(), out)
    first = (out / "report.md").read_text()
    write_report_folder(data.run(complete=False), out)  # the same folder again: modelcost's files are replaced
    assert (out / "report.md").read_text() != first and "INCOMPLETE" in (out / "report.md").read_text()
    assert (out / "notes.txt").read_text() == "keep\n" and (out / "plots/diagram.png").read_text() == "mine\n"


def test_the_cli_refuses_before_it_measures(tmp_path: Path) -> None:
    out = tmp_path / "results"
    _plant(out, {"report.html": "<p>my page</p>\n"})
    res = CliRunner().invoke(app, ["analyze", str(SAMPLE), "--static", "--out", str(out)])
    assert res.exit_code == 1
    assert "report.html there was not written by modelcost" in res.output and "choose another --out" in res.output
    assert "Traceback" not in res.output and "MACs" not in res.output  # refused before the analysis
    assert (out / "report.html").read_text() == "<p>my page</p>\n"
    assert sorted(p.name for p in out.iterdir()) == ["report.html"]


def test_the_files_checked_are_the_files_written(tmp_path: Path) -> None:
    from modelcost.report.folder import report_files

    out = write_report_folder(data.run(), tmp_path / "o", tmp_path / "absent.csv")
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert set(written) - {".modelcost-manifest"} <= set(report_files())


def test_the_llm_folder_follows_the_same_rule(tmp_path: Path) -> None:
    from modelcost.core.llm import LlmReport
    from modelcost.report.llm import write_llm_folder

    report = LlmReport("m", "zoo:m", "fp16", 10, 20, {"fp16": 20}, 20, [])
    out = tmp_path / "llm"
    _plant(out, {"report.md": "mine\n"})
    with pytest.raises(ModelcostError, match="report.md there was not written by modelcost"):
        write_llm_folder(report, out)
    (out / "report.md").unlink()
    write_llm_folder(report, out)
    write_llm_folder(report, out)  # its own files, replaced
    assert sorted(p.name for p in out.iterdir()) == [".modelcost-manifest", "report.json", "report.md"]
