"""The report in a real browser (issue 14): headless Chromium opens the Snakemake report of a
small study, which loads without console errors, lists its sections in reading order, and
renders the Findings page and a dataset's figures."""

import shutil
import time

import pytest

from conftest import CONFIGS, snakemake
from modelvar.findings.report import headline_sentences

pytestmark = pytest.mark.workflow
CHROMEDRIVER = shutil.which("chromedriver")
selenium = pytest.importorskip("selenium")
needs_browser = pytest.mark.skipif(
    CHROMEDRIVER is None or shutil.which("chromium") is None,
    reason="no chromium/chromedriver (scripts/test.sh installs them from Debian as root)")


def _report_of(work, config):
    """The report of a study run in ``work``."""
    snakemake(work, config, "--cores", "2")
    snakemake(work, config, "--report", "results/report.html")
    return work / "results" / "report.html"


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    return _report_of(tmp_path_factory.mktemp("report"), CONFIGS / "tiny.yaml")


@pytest.fixture(scope="module")
def eight_datasets(tmp_path_factory):
    """The report of a study of 8 datasets: a long answer on the landing page."""
    return _report_of(tmp_path_factory.mktemp("eight"), CONFIGS / "eight.yaml")


@pytest.fixture(scope="module")
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--no-first-run"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    yield driver
    driver.quit()


def viewport(browser, width: int, height: int) -> None:
    """The page's viewport exactly (a window's size includes its frame)."""
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})


@needs_browser
@pytest.mark.parametrize("size", [(1366, 768), (1400, 1000)])
def test_the_answer_is_on_the_first_screen_of_a_laptop_for_a_short_and_a_long_answer(
        report, eight_datasets, browser, size):
    """The landing page's heading and first sentence lie inside the viewport on load, with no
    scrolling, for a study of one dataset and one of eight (its answer taller than the
    window); the headline figure is shown wide enough to read (at least 900 px)."""
    from selenium.webdriver.common.by import By

    width, height = size
    viewport(browser, width, height)
    try:
        for page in (report, eight_datasets):
            browser.get(page.as_uri())
            time.sleep(1.5)
            heading = browser.find_element(By.XPATH, "//h1[contains(., \"study's answer\")]")
            first = browser.find_element(By.XPATH, "//div[contains(@class, 'prose')]//li")
            for element in (heading, first):
                top = element.location["y"]
                bottom = top + element.size["height"]
                assert 0 <= top and bottom <= height, (page, element.text[:60], top, bottom)
            assert browser.execute_script("return window.scrollY") == 0
            figure = browser.find_element(By.XPATH,
                                          "//img[@alt=\"the study's headline figure\"]")
            assert figure.size["width"] >= 900, figure.size
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def study_tables(results):
    import pandas as pd

    study = results / "aggregated" / "study"
    return (pd.read_parquet(study / "sources.parquet"),
            pd.read_parquet(study / "components.parquet"),
            pd.read_parquet(study / "margins.parquet"))


def open_item(browser, category: str, item: str) -> None:
    from selenium.webdriver.common.by import By

    browser.find_element(By.XPATH, f"//*[normalize-space(text())='{category}']").click()
    time.sleep(0.5)
    row = browser.find_element(By.XPATH, f"//td[normalize-space(text())='{item}']/ancestor::tr[1]")
    row.find_element(By.XPATH, ".//a[@iconname='eye']").click()
    time.sleep(1.0)


def rendered_images(elements) -> list[int]:
    return [int(e.get_attribute("naturalWidth") or 0) for e in elements]


@needs_browser
def test_report_loads_in_reading_order_and_renders_findings_and_figures(report, browser):
    from selenium.webdriver.common.by import By

    browser.get(report.as_uri())
    time.sleep(1.5)
    # the first screen: the study's answer (its first sentence) and the headline figure, above
    # the fold, before any click
    first = headline_sentences(*study_tables(report.parent))[0]
    answer = browser.find_element(By.XPATH, "//li[contains(., 'varied within a repeat')]")
    assert answer.text == first and answer.location["y"] < 1000 - 50, answer.location
    headline = browser.find_element(By.XPATH, "//img[@alt=\"the study's headline figure\"]")
    assert int(headline.get_attribute("naturalWidth")) > 500
    assert headline.location["y"] < 1000
    menu = browser.find_element(By.TAG_NAME, "body").text
    sections = ["1. Findings", "2. Data", "3.01. vehicle"]
    assert all(s in menu for s in sections), menu
    assert [menu.index(s) for s in sections] == sorted(menu.index(s) for s in sections)
    # the Findings page: generated sentences, the tables and the embedded headline figures
    open_item(browser, "1. Findings", "1. findings: sentences, tables, claims")
    frame = browser.find_element(By.TAG_NAME, "iframe")
    browser.switch_to.frame(frame)
    page = browser.find_element(By.TAG_NAME, "body").text
    assert "Findings" in page and "Sources of variance, one at a time" in page
    assert "varied within a repeat under 50 % train" in page
    assert "Seed 004's stated findings" in page
    images = rendered_images(browser.find_elements(By.TAG_NAME, "img"))
    # sources of variance, accuracy vs reproducibility, classifiers compared, and the figure of
    # each kind of claim the page has claims of (a kind with none is not shown)
    import pandas as pd

    from modelvar.findings.figures import verdict_figures

    drawn = [name for name in verdict_figures("both", 1)
             if len(pd.read_csv(report.parent / "findings" / f"{name}.csv"))]
    assert drawn and len(images) == 3 + len(drawn) and all(w > 500 for w in images)
    assert "Classifiers compared" in page
    browser.switch_to.default_content()
    # menu items have words, not paths
    browser.get(report.as_uri())
    time.sleep(1.0)
    browser.find_element(By.XPATH, "//*[normalize-space(text())='2. Data']").click()
    time.sleep(0.5)
    items = browser.find_element(By.TAG_NAME, "body").text
    assert "datasets: rows, features, classes, sources" in items
    assert "overview.html" not in items
    # a dataset's figure, in its place in the reading order
    browser.get(report.as_uri())
    time.sleep(1.0)
    open_item(browser, "3.01. vehicle", "02. sources of variance, each alone")
    shown = [w for w in rendered_images(browser.find_elements(By.TAG_NAME, "img")) if w > 500]
    assert shown, "the figure did not render"
    labels = browser.find_element(By.TAG_NAME, "body").text
    assert labels.index("01. every cell: summary table") < labels.index(
        "02. sources of variance, each alone")
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []
