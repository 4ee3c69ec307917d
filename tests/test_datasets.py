import json
import shutil

import numpy as np
import pandas as pd
import pytest

from modelvar.data import CATEGORICAL, NUMERIC, DatasetError, load, read, sources, write


def test_embedded_anneal_matches_its_provenance():
    ds = load("anneal", {"source": "embedded"})
    assert ds.X.shape == (898, 38)
    assert ds.y.value_counts().to_dict() == {"3": 684, "2": 99, "5": 67, "U": 40, "1": 8}
    assert int(ds.X.isna().sum().sum()) == 22175
    assert ds.provenance["openml"]["data_id"] == 2
    assert ds.feature_types["family"] == CATEGORICAL
    assert ds.feature_types["carbon"] == NUMERIC
    # declared ARFF levels are kept even where some are never observed
    assert ds.categories["family"][:3] == ["GB", "GK", "GS"]


@pytest.mark.parametrize(
    ("name", "shape", "n_cat", "classes"),
    [
        ("vehicle", (846, 18), 0, ["bus", "opel", "saab", "van"]),
        ("credit-g", (1000, 20), 13, ["good", "bad"]),
        ("car", (1728, 6), 6, ["acc", "good", "unacc", "vgood"]),
        ("blood-transfusion-service-center", (748, 4), 0, ["1", "2"]),
    ],
)
def test_every_embedded_dataset_loads(name, shape, n_cat, classes):
    ds = load(name, {"source": "embedded"})
    assert ds.X.shape == shape
    assert len(ds.categorical_columns) == n_cat
    assert ds.classes == classes


def test_sklearn_source_uses_class_names():
    ds = load("iris", {"source": "sklearn"})
    assert ds.classes == ["setosa", "versicolor", "virginica"]
    assert ds.provenance["source"] == "sklearn"
    with pytest.raises(DatasetError, match="no scikit-learn bundled dataset named 'nope'"):
        load("x", {"source": "sklearn", "name": "nope"})


def test_embedded_checksum_mismatch_is_refused(tmp_path, monkeypatch):
    copy = tmp_path / "embedded"
    shutil.copytree(sources.embedded_dir(), copy)
    with open(copy / "vehicle.csv", "a") as fh:
        fh.write("1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,van\n")
    monkeypatch.setattr(sources, "embedded_dir", lambda: copy)
    with pytest.raises(DatasetError, match="sha256"):
        load("vehicle", {"source": "embedded"})


def test_unknown_embedded_name():
    with pytest.raises(DatasetError, match="no embedded dataset named 'nope'"):
        load("nope", {"source": "embedded"})


def test_canonical_round_trip_and_tamper_detection(tmp_path):
    ds = load("credit-g", {"source": "embedded"})
    meta = write(ds, tmp_path / "c.parquet", tmp_path / "c.json")
    back = read(tmp_path / "c.parquet", tmp_path / "c.json")
    pd.testing.assert_frame_equal(back.X, ds.X)
    assert back.y.tolist() == ds.y.tolist()
    assert back.classes == ds.classes and back.categories == ds.categories
    on_disk = json.loads((tmp_path / "c.json").read_text())
    assert on_disk["class_counts"] == {"good": 700, "bad": 300}
    assert on_disk["parquet_sha256"] == meta["parquet_sha256"]
    table = pd.read_parquet(tmp_path / "c.parquet")
    np.testing.assert_array_equal(table["sample"], np.arange(1000))
    table.iloc[:10].to_parquet(tmp_path / "c.parquet")
    with pytest.raises(DatasetError, match="re-run the prepare step"):
        read(tmp_path / "c.parquet", tmp_path / "c.json")


def write_csv(tmp_path, text):
    path = tmp_path / "mine.csv"
    path.write_text(text)
    return path


def test_user_csv_with_categoricals(tmp_path):
    path = write_csv(tmp_path, "a,colour,label\n1.5,red,x\n2.5,blue,y\n,red,x\n3,?,y\n")
    ds = load("mine", {"source": "file", "path": str(path), "target": "label",
                       "categorical": ["colour"]})
    assert ds.feature_types == {"a": NUMERIC, "colour": CATEGORICAL}
    assert ds.categories["colour"] == ["blue", "red"]
    assert ds.X["a"].isna().sum() == 1 and ds.X["colour"].isna().sum() == 1


@pytest.mark.parametrize(
    ("text", "spec", "message"),
    [
        ("a,b\n1,x\n2,y\n", {"target": "label"}, "target column 'label' not found"),
        ("a,colour,label\n1,red,x\n2,blue,y\n", {"target": "label"},
         r"\['colour'\] hold non-numeric values but are not declared categorical"),
        ("a,label\n1,x\n2,\n3,y\n", {"target": "label"}, "target 'label' has 1 missing"),
        ("a,label\n1,x\n2,x\n", {"target": "label"}, "at least 2 classes"),
        ("a,label\n1,x\n2,y\n", {"target": "label", "categorical": ["zz"]},
         r"categorical column 'zz' not found"),
        ("a,Class\n1,x\n2,y\n", {"target": "class"},
         r"target column 'class' not found; did you mean 'Class'\?"),
        ("a,colour,label\n1,red,x\n2,blue,y\n", {"target": "label", "categorical": ["color"]},
         r"categorical column 'color' not found; did you mean 'colour'\?"),
        # pandas read these as columns a and a.1, or as infinite floats (issue 20)
        ("a,a,label\n1,2,x\n2,3,y\n", {"target": "label"},
         r"names column\(s\) \['a'\] more than once"),
        ("a,b,label\n1,inf,x\n2,-inf,y\n3,1,x\n", {"target": "label"},
         r"infinite values.*\{'b': 2\}"),
    ],
)
def test_user_file_errors_name_the_problem(tmp_path, text, spec, message):
    path = write_csv(tmp_path, text)
    with pytest.raises(DatasetError, match=message):
        load("mine", {"source": "file", "path": str(path), **spec})


def test_missing_and_truncated_files(tmp_path):
    with pytest.raises(DatasetError, match="does not exist"):
        load("m", {"source": "file", "path": str(tmp_path / "no.csv"), "target": "y"})
    src = sources.embedded_dir() / "credit-g.arff"
    truncated = tmp_path / "cut.arff"
    truncated.write_text(src.read_text()[:20000] + "\n'bad,row\n")
    with pytest.raises(DatasetError, match="cannot read ARFF"):
        load("cut", {"source": "file", "path": str(truncated), "target": "class"})


def test_wide_datasets_build_without_warnings():
    """cnae-9 (857 columns) used to log 756 pandas PerformanceWarning blocks when prepared."""
    import warnings

    from modelvar.data.canonical import build

    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.random((60, 857)), columns=[f"f{i}" for i in range(857)])
    frame["y"] = np.repeat(["a", "b", "c"], 20)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ds = build("wide", frame, "y", [])
    assert ds.X.shape == (60, 857)


@pytest.mark.parametrize("name", ["anneal", "credit-g", "vehicle"])
def test_fit_jobs_read_the_same_arrays_without_pandas(tmp_path, name):
    """read_arrays (pyarrow only: a fit job's start-up) gives what the pandas path gives."""
    from modelvar.data.arrays import DataArrays, read_arrays

    ds = load(name, {"source": "embedded"})
    write(ds, tmp_path / "d.parquet", tmp_path / "d.json")
    fast = read_arrays(tmp_path / "d.parquet", tmp_path / "d.json")
    slow = DataArrays.from_dataset(read(tmp_path / "d.parquet", tmp_path / "d.json"))
    assert fast.name == slow.name and fast.classes == slow.classes
    np.testing.assert_array_equal(fast.y, slow.y)
    for field in ("numeric", "codes"):
        np.testing.assert_array_equal(getattr(fast.encoded, field), getattr(slow.encoded, field))
    assert fast.encoded.levels == slow.encoded.levels
    assert fast.encoded.numeric_columns == slow.encoded.numeric_columns
    if name == "anneal":
        assert (fast.encoded.codes == -1).any()  # missing categorical cells stay missing


def test_a_name_not_found_suggests_near_matches_before_listing_a_few():
    """Issue 24: 'Class' for 'class' among 280 columns names the near match, not all 280."""
    from modelvar.data.errors import near_matches, not_found_message

    columns = [f"word_{i}" for i in range(279)] + ["class"]
    text = not_found_message("target column", "Class", columns)
    assert "did you mean 'class'?" in text and "(280 in all)" in text
    assert text.count("word_") == 20
    assert near_matches("colr", ["colour", "color", "size"]) == ["color", "colour"]
    assert near_matches("zzz", ["colour", "size"]) == []
    assert "did you mean" not in not_found_message("column", "zzz", ["a", "b"])
