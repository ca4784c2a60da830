"""OfflineWeb.get on a generated folder: what the server answers, without sockets."""

import re

import pytest
from protego import Protego

from benchmarks.webbench.linkgraph import crawl, page_links
from benchmarks.webbench.web import MissingPackagesError, OfflineWeb, Site


def hrefs(body: bytes) -> list[str]:
    return re.findall(r"""href=["']?([^"'\s>]+)""", body.decode())


def test_hub_lists_the_site_with_its_start_url(sample_web):
    response = sample_web.get("http://hub.test/")
    assert response.status == 200
    assert response.headers["Content-Type"].startswith("text/html")
    body = response.body.decode()
    assert "<title>Local documentation hub</title>" in body
    assert "<h1>Local documentation hub</h1>" in body
    assert '<li><a href="http://site.test/index.html">Sample site</a> (site.test)</li>' in body


def test_root_and_directories_redirect(sample_web):
    root = sample_web.get("http://site.test/")
    assert (root.status, root.location) == (301, "http://site.test/index.html")
    for path in ("/sub", "/sub/"):
        response = sample_web.get("http://site.test" + path)
        assert (response.status, response.location) == (301, "http://site.test/sub/index.html")


def test_redirects_keep_the_port_the_client_used(sample_web):
    assert sample_web.get("http://site.test:8080/").location == "http://site.test:8080/index.html"


def test_pages_and_files_are_served_with_type_and_length(sample_web, sample_folder):
    page = sample_web.get("http://site.test/sub/b.html")
    assert page.status == 200 and page.is_html
    assert page.body == (sample_folder / "sub/b.html").read_bytes()
    css = sample_web.get("http://site.test/style.css?v=2")
    assert (css.status, css.headers["Content-Type"]) == (200, "text/css")
    assert int(css.headers["Content-Length"]) == len(css.body) == len(b"body { color: black }")


@pytest.mark.parametrize(
    "url",
    [
        "http://site.test/missing.html",
        "http://site.test/a.html/",
        "http://site.test/../../../../etc/passwd",
        "http://site.test/%2e%2e/%2e%2e/etc/hostname",
        "http://unknown.test/index.html",
        "http://hub.test/index.html",
    ],
)
def test_missing_files_unknown_hosts_and_escapes_are_404(sample_web, url):
    assert sample_web.get(url).status == 404


def test_https_is_not_served_and_other_schemes_are_refused(sample_web):
    assert sample_web.get("https://site.test/index.html").status == 501
    with pytest.raises(ValueError, match="not an http"):
        sample_web.get("ftp://site.test/index.html")


def test_robots_txt_disallows_only_the_given_paths(sample_web):
    site = Protego.parse(sample_web.get("http://site.test/robots.txt").body.decode())
    assert not site.can_fetch("http://site.test/private/secret.html", "Scrapy")
    assert site.can_fetch("http://site.test/a.html", "Scrapy")
    hub = Protego.parse(sample_web.get("http://hub.test/robots.txt").body.decode())
    assert hub.can_fetch("http://hub.test/anything", "Scrapy")
    assert sample_web.get("http://unknown.test/robots.txt").status == 404


def test_links_to_the_public_address_and_disk_copy_point_at_the_local_site(sample_web):
    links = hrefs(sample_web.get("http://site.test/index.html").body)
    assert "http://site.test/sub/b.html#part" in links  # public address, path kept
    assert "http://site.test/" in links  # public host root
    assert "http://site.test/a.html" in links  # file:// copy, unquoted attribute
    assert links.count("http://site.test/sub/b.html") == 1  # absolute path on disk
    assert not any("example.org/docs/" in link or "/sample/" in link for link in links)


def test_other_links_and_text_stay_as_shipped(sample_web):
    body = sample_web.get("http://site.test/index.html").body.decode()
    assert 'href="a.html"' in body and 'href="style.css"' in body
    assert 'href="http://elsewhere.invalid/page.html"' in body
    assert 'href="https://www.example.org/docsmore/x.html"' in body  # same host, not the site
    assert "mentions https://www.example.org/docs/a.html is not" in body


def test_start_page_of_a_folder_without_index(tmp_path):
    (tmp_path / "guide").mkdir()
    (tmp_path / "guide" / "intro.html").write_text("<title>Intro</title>")
    (tmp_path / "notes.txt").write_text("not a page")
    web = OfflineWeb.from_folder(tmp_path, "guide.test")
    assert web.start_urls == ["http://guide.test/guide/intro.html"]
    assert web.get("http://guide.test/").location == "http://guide.test/guide/intro.html"


def test_bad_folders_and_hosts_are_named_in_the_error(tmp_path):
    with pytest.raises(NotADirectoryError, match=r"not a folder: .*nowhere"):
        OfflineWeb.from_folder(tmp_path / "nowhere")
    with pytest.raises(FileNotFoundError, match="no HTML files"):
        OfflineWeb.from_folder(tmp_path)
    (tmp_path / "index.html").write_text("<title>x</title>")
    with pytest.raises(ValueError, match="not a host name"):
        OfflineWeb.from_folder(tmp_path, "bad host/")
    with pytest.raises(ValueError, match=r"served twice: hub\.test"):
        OfflineWeb.from_folder(tmp_path, "hub.test")


def test_missing_packages_error_names_them_and_the_install_command(tmp_path):
    missing = Site("gone.test", "/docs/", str(tmp_path / "absent"), "index.html", "Gone", "python-gone-doc")
    assert OfflineWeb.missing_packages([missing]) == ["python-gone-doc"]
    assert OfflineWeb.available_sites([missing]) == []
    with pytest.raises(MissingPackagesError) as error:
        OfflineWeb([missing])
    message = str(error.value)
    assert "python-gone-doc" in message
    assert "apt-get install --no-install-recommends python-gone-doc" in message
    assert "\n" not in message


def test_breadth_first_graph_of_a_folder(sample_web):
    graph = crawl(sample_web, "http://hub.test/")
    assert set(graph.pages) == {
        "http://hub.test/",
        "http://site.test/index.html",
        "http://site.test/a.html",
        "http://site.test/sub/index.html",
        "http://site.test/sub/b.html",
    }
    assert graph.blocked == {"http://site.test/private/secret.html"}
    assert graph.status["http://site.test/missing.html"] == 404
    assert graph.status["http://elsewhere.invalid/page.html"] == 404
    assert graph.redirects["http://site.test/sub/"] == "http://site.test/sub/index.html"
    assert graph.cross_site_links() == [("http://hub.test/", "http://site.test/index.html")]


def test_page_links_match_scrapys_link_extractor(sample_web):
    from scrapy.http import HtmlResponse
    from scrapy.linkextractors import LinkExtractor

    url = "http://site.test/index.html"
    body = sample_web.get(url).body
    scrapy_targets = {
        link.url.partition("#")[0] for link in LinkExtractor().extract_links(HtmlResponse(url, body=body))
    }
    assert set(page_links(url, body)) == scrapy_targets
