"""Template files: validation errors name the file, the line and the field; settings and actions map correctly."""

from __future__ import annotations

from pathlib import Path

import pytest
from scrapy.settings import Settings
from scrapy_playwright.page import PageMethod

from adaptive_spider.extract import Template, TemplateError

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"

VALID_FIELD = "fields:\n  - name: title\n    xpath: //h1\n"

MALFORMED = [
    # id, file name, content, line, field, problem
    ("bad-yaml", "t.yaml", "fields:\n  - name: title\n   xpath: //h1\n", 3, "YAML syntax", "expected <block end>"),
    ("bad-json", "t.json", '{\n  "fields": [\n    {"name": "t", "xpath": "//h1",}\n  ]\n}\n', 3, "JSON syntax", "Expecting property name"),
    ("missing-xpath", "t.yaml", VALID_FIELD + "  - name: price\n    type: text\n", 4, "field 'price' (fields[1]).xpath", "missing"),
    ("missing-xpath-json", "t.json", '{"fields": [\n  {"name": "t", "xpath": "//h1"},\n  {"name": "u",\n   "type": "link"}\n]}\n', 3, "field 'u' (fields[1]).xpath", "missing"),
    ("unknown-type", "t.yaml", VALID_FIELD + "    type: number\n", 4, "field 'title' (fields[0]).type", "unknown type 'number'"),
    ("unknown-type-json", "t.json", '{"fields": [\n  {"name": "t",\n   "xpath": "//h1",\n   "type": "price"}\n]}', 4, "field 't' (fields[0]).type", "unknown type 'price'"),
    ("bad-regex", "t.yaml", VALID_FIELD + "    clean:\n      - '\\$'\n      - '[a-'\n", 6, "field 'title' (fields[0]).clean[1]", "invalid regular expression '[a-'"),
    ("bad-regex-mapping", "t.yaml", VALID_FIELD + "    clean:\n      - pattern: '(x'\n        replace: y\n", 5, "field 'title' (fields[0]).clean[0].pattern", "invalid regular expression"),
    ("negative-max-pages", "t.yaml", VALID_FIELD + "options:\n  max_pages: -3\n", 5, "options.max_pages", "must be a positive integer, got -3"),
    ("negative-max-pages-json", "t.json", '{"fields": [{"name": "t", "xpath": "//h1"}],\n "options": {\n   "max_pages": -3}}', 3, "options.max_pages", "got -3"),
    ("unknown-action", "t.yaml", VALID_FIELD + "actions:\n  - wait: 100\n  - hover: .menu\n", 6, "actions[1]", "unknown action 'hover'"),
    ("bad-xpath", "t.yaml", "fields:\n  - name: t\n    xpath: '//div['\n", 3, "field 't' (fields[0]).xpath", "invalid XPath '//div['"),
    ("unknown-xpath-prefix", "t.yaml", "fields:\n  - name: t\n    xpath: 'foo:bar(1)'\n", 3, "field 't' (fields[0]).xpath", "invalid XPath"),
    ("typo-key", "t.yaml", "fields:\n  - name: t\n    xpth: //h1\n", 3, "field 't' (fields[0]).xpth", "did you mean 'xpath'?"),
    ("duplicate-field", "t.yaml", VALID_FIELD + "  - name: title\n    xpath: //h2\n", 4, "fields[1].name", "duplicate field name 'title'"),
    ("reserved-name", "t.yaml", "fields:\n  - name: url\n    xpath: //a\n", 2, "fields[0].name", "must be an identifier"),
    ("reserved-sha1", "t.yaml", "fields:\n  - name: sha1\n    xpath: //a\n", 2, "fields[0].name", "other than url, template, ranking, sha1"),
    ("reserved-ranking-name", "t.yaml", "fields:\n  - name: v\n    xpath: //a\n    ranking: url\n", 4, "field 'v' (fields[0]).ranking", "other than url"),
    ("no-fields", "t.yaml", "name: empty\noptions:\n  max_pages: 3\n", 1, "fields", "missing"),
    ("empty-file", "t.yaml", "", 1, "template", "must be a mapping"),
    ("top-level-list", "t.yaml", "- name: t\n  xpath: //h1\n", 1, "template", "must be a mapping"),
    ("wall-time", "t.yaml", VALID_FIELD + "options:\n  wall_time: soon\n", 5, "options.wall_time", "positive duration"),
    ("robots-url", "t.yaml", VALID_FIELD + "options:\n  robots_txt: ftp://example/robots.txt\n", 5, "options.robots_txt", "http(s) URL or a path"),
    ("scroll-zero", "t.yaml", VALID_FIELD + "actions:\n  - scroll: 0\n", 5, "actions[0].scroll", "positive whole number of times"),
    ("wait-negative", "t.yaml", VALID_FIELD + "actions:\n  - wait: -5\n", 5, "actions[0].wait", "non-negative whole number of milliseconds"),
    ("click-no-selector", "t.yaml", VALID_FIELD + "actions:\n  - click: {timeout: 100}\n", 5, "actions[0].click.selector", "missing"),
    ("duplicate-key", "t.yaml", VALID_FIELD + "    xpath: //h2\n", 4, "YAML syntax", "duplicate key 'xpath'"),
    ("bad-flag", "t.yaml", VALID_FIELD + "    required: maybe\n", 4, "field 'title' (fields[0]).required", "must be true or false"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "content", "line", "field", "problem"),
    [case[1:] for case in MALFORMED],
    ids=[case[0] for case in MALFORMED],
)
def test_malformed_template_gives_one_line_error(tmp_path, name, content, line, field, problem):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(TemplateError) as caught:
        Template.from_file(path)
    message = str(caught.value)
    assert "\n" not in message
    location = f"{path}, line {line}: " if line is not None else f"{path}: "
    assert message.startswith(location + field + ": "), message
    assert problem in message
    assert (caught.value.line, caught.value.field) == (line, field)


def test_missing_file(tmp_path):
    with pytest.raises(TemplateError, match=r"nope\.yaml: file: cannot read the template"):
        Template.from_file(tmp_path / "nope.yaml")


# The templates among the examples (docs/examples also holds Python examples).
TEMPLATE_EXAMPLES = sorted(path for path in EXAMPLES.glob("*.*") if path.suffix in (".yaml", ".yml", ".json"))


@pytest.mark.parametrize("path", TEMPLATE_EXAMPLES, ids=lambda p: p.name)
def test_worked_examples_are_valid(path):
    template = Template.from_file(path)
    assert template.fields


def test_limits_map_onto_scrapy_settings(tmp_path):
    path = tmp_path / "limits.yaml"
    path.write_text(
        VALID_FIELD + "options:\n  max_pages: 40\n  max_documents: 300\n  max_depth: 4\n"
        "  wall_time: 2m\n  robots_txt: https://shop.test/seo/robots.txt\n"
    )
    assert Template.from_file(path).scrapy_settings() == {
        "CLOSESPIDER_PAGECOUNT": 40,
        "CLOSESPIDER_ITEMCOUNT": 300,
        "DEPTH_LIMIT": 4,
        "CLOSESPIDER_TIMEOUT": 120.0,
        "ADAPTIVE_ROBOTSTXT_LOCATIONS": {"shop.test": "https://shop.test/seo/robots.txt"},
        "DOWNLOADER_MIDDLEWARES": {"adaptive_spider.extract.robotstxt.RobotsTxtLocationMiddleware": 90},
    }


def test_no_options_no_settings(tmp_path):
    path = tmp_path / "plain.yaml"
    path.write_text(VALID_FIELD)
    template = Template.from_file(path)
    assert template.scrapy_settings() == {}
    assert template.request_meta() == {}
    assert template.name == "plain"  # the file name when the template has none


def test_update_settings_merges_middlewares_and_yields_to_command_line(tmp_path):
    path = tmp_path / "limits.yaml"
    path.write_text(VALID_FIELD + "options:\n  max_pages: 40\n  max_depth: 4\n  robots_txt: /seo/robots.txt\n")
    settings = Settings({"DOWNLOADER_MIDDLEWARES": {"myproject.middlewares.Proxy": 350}})
    settings.set("DEPTH_LIMIT", 2, priority="cmdline")

    Template.from_file(path).update_settings(settings)

    assert settings.getint("CLOSESPIDER_PAGECOUNT") == 40
    assert settings.getint("DEPTH_LIMIT") == 2  # -s DEPTH_LIMIT=2 wins over the template
    assert settings.getdict("DOWNLOADER_MIDDLEWARES") == {
        "myproject.middlewares.Proxy": 350,
        "adaptive_spider.extract.robotstxt.RobotsTxtLocationMiddleware": 90,
    }
    assert settings.getdict("ADAPTIVE_ROBOTSTXT_LOCATIONS") == {"*": "/seo/robots.txt"}


def _calls(meta):
    return [(m.method, m.args, m.kwargs) for m in meta["playwright_page_methods"]]


def test_actions_become_playwright_page_methods(tmp_path):
    path = tmp_path / "actions.yaml"
    path.write_text(
        VALID_FIELD + "actions:\n  - wait: 500\n  - scroll: {times: 2, pause: 100}\n  - click: button.more\n"
        "  - wait_for: {selector: '.item', timeout: 3000}\n  - scroll: 1\n"
    )
    template = Template.from_file(path)
    meta = template.request_meta()
    scroll = "window.scrollTo(0, document.body.scrollHeight)"
    assert meta["playwright"] is True
    assert all(isinstance(m, PageMethod) for m in meta["playwright_page_methods"])
    assert _calls(meta) == [
        ("wait_for_timeout", (500,), {}),
        ("evaluate", (scroll,), {}),
        ("wait_for_timeout", (100,), {}),
        ("evaluate", (scroll,), {}),
        ("wait_for_timeout", (100,), {}),
        ("click", ("button.more",), {}),
        ("wait_for_selector", (".item",), {"state": "attached", "timeout": 3000}),
        ("evaluate", (scroll,), {}),
        ("wait_for_timeout", (250,), {}),
    ]
    # scrapy-playwright stores results on PageMethod objects: each request gets its own.
    assert template.request_meta()["playwright_page_methods"][0] is not meta["playwright_page_methods"][0]


def test_json_template_with_every_section(tmp_path):
    path = tmp_path / "full.json"
    path.write_text(
        '{"name": "full", "fields": [{"name": "t", "xpath": "//h1", "clean": {"pattern": "x", "replace": "y"}}],'
        ' "options": {"exclude": "/login", "robots_txt": {"shop.test:8080": "/r.txt"}},'
        ' "actions": [{"click": {"selector": "#more", "timeout": 500}}]}'
    )
    template = Template.from_file(path)
    assert template.name == "full"
    assert template.is_excluded("http://shop.test/login?next=/")
    assert template.scrapy_settings()["ADAPTIVE_ROBOTSTXT_LOCATIONS"] == {"shop.test:8080": "/r.txt"}
    assert _calls(template.request_meta()) == [("click", ("#more",), {"timeout": 500})]
