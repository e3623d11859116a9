"""The shared shape of transcribed paper tables (analysis/published.py, issue 25)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from collablab.analysis.published import check_table, load_published

INDEX = "file,paper,table,caption,section,scale,notes\n"


def _folder(tmp_path: Path, index: str, files: dict[str, str]) -> Path:
    (tmp_path / "index.csv").write_text(INDEX + index)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def test_a_folder_loads_with_its_index(tmp_path: Path) -> None:
    f = _folder(tmp_path, "t9.csv,mecobench,Table 9,SR by team size,§4.2,fraction,\n",
                {"t9.csv": "model,n_agents,metric,value\nGPT-5,2,SR,0.5\nGPT-5,3,SR,0.4\n"})
    t = load_published(f)["t9"]
    assert t.table == "Table 9" and t.conditions == ["n_agents"] and t.rows["value"].tolist() == [0.5, 0.4]


@pytest.mark.parametrize("index,files,message", [
    ("t.csv,p,T,c,s,fraction,\n", {}, "does not exist"),
    ("t.csv,p,T,c,s,fraction,\n", {"t.csv": "model,metric,value\na,SR,0.1\n", "u.csv": "x\n"}, "not named"),
    ("t.csv,p,T,c,s,odds,\n", {"t.csv": "model,metric,value\na,SR,0.1\n"}, "scale"),
    ("t.csv,p,T,c,s,fraction,\n", {"t.csv": "model,metric,value\na,SR,high\n"}, "not numeric"),
    ("t.csv,p,T,c,s,fraction,\n", {"t.csv": "model,metric,value\na,SR,0.1\na,SR,0.2\n"}, "share a key"),
])
def test_bad_folders_are_named(tmp_path: Path, index: str, files: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        load_published(_folder(tmp_path, index, files))


def test_check_table_wants_the_three_columns() -> None:
    with pytest.raises(ValueError, match="no 'metric'"):
        check_table(pd.DataFrame({"model": ["a"], "value": [1.0]}), "x.csv")


def test_a_run_beside_the_paper() -> None:
    from collablab.analysis.published import beside_published

    run = pd.DataFrame({"n_agents": [1, 2, 3, 4], "SR": [0.5, 0.6, 0.7, 0.2], "SR_low": [0.4, 0.5, 0.6, None],
                        "SR_high": [0.6, 0.7, 0.8, None]})
    pub = pd.DataFrame({"model": "Qwen3-VL-32B", "n_agents": ["1", "2", "3", "4"], "metric": "SR",
                        "value": [55.0, 80.0, 50.0, 30.0]})
    t = beside_published(run, pub, on=["n_agents"], metric="SR", value="SR", low="SR_low", high="SR_high",
                         scale=100)
    assert t["verdict"].tolist() == ["inside", "above", "below", "no interval"]
    assert t["published"].tolist() == [0.55, 0.8, 0.5, 0.3]
    none = beside_published(run.head(1), pub, on=["n_agents"], metric="CR", value="SR", low="SR_low",
                            high="SR_high")
    assert none["verdict"].tolist() == ["no published row"] and none["published"].isna().all()
