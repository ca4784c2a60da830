"""A small generated folder of HTML files, served as one site of the offline web."""

import pytest

from benchmarks.webbench.web import OfflineWeb

SITE_HOST = "site.test"
PUBLIC_URL = "https://www.example.org/docs/"


def write_sample_folder(root):
    """A site with a subdirectory, a private area, a stylesheet and links of every kind."""
    pages = {
        "index.html": f"""<!DOCTYPE html><html><head><title>Sample home</title>
<link rel="stylesheet" href="style.css"></head><body>
<a href="a.html">relative</a>
<a href="sub/">directory</a>
<a href="private/secret.html">private</a>
<a href="https://www.example.org/docs/sub/b.html#part">public address</a>
<a href='https://www.example.org/'>public host root</a>
<a href=file://{root}/a.html>on-disk copy, unquoted</a>
<a href="{root}/sub/b.html">on-disk path</a>
<a href="http://elsewhere.invalid/page.html">elsewhere</a>
<a href="https://www.example.org/docsmore/x.html">look-alike path</a>
<p>Text that mentions https://www.example.org/docs/a.html is not a link.</p>
</body></html>""",
        "a.html": '<html><head><title>Page A</title></head><body><a href="missing.html">gone</a></body></html>',
        "sub/index.html": '<html><head><title>Sub</title></head><body><a href="b.html">b</a></body></html>',
        "sub/b.html": '<html><head><title>Page B</title></head><body><a href="../index.html">home</a></body></html>',
        "private/secret.html": "<html><head><title>Secret</title></head><body>private</body></html>",
        "style.css": "body { color: black }",
    }
    for name, text in pages.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def sample_folder(tmp_path):
    return write_sample_folder(tmp_path / "sample")


@pytest.fixture
def sample_web(sample_folder):
    return OfflineWeb.from_folder(
        sample_folder, SITE_HOST, title="Sample site", public_urls=[PUBLIC_URL], disallow=["/private/"]
    )
