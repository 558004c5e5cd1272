"""A review's title and question (review.yaml) are inline Markdown: rendered, escaped and never a link in a page;
plain text where no HTML can go (a page's <title>, an attribute, the feed)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from lxml import etree
from lxml import html as lxml_html

from sitegen.commands import build
from sitegen.site.templates import inline_markdown, markdown_plain

TITLE = "Object-in-context memory in *Mus musculus* and `Rattus` <b>rats</b> [x](javascript:alert(1))"


@pytest.mark.parametrize(("written", "html", "plain"), [
    ("*Mus musculus* and __bold__", "<em>Mus musculus</em> and <strong>bold</strong>", "Mus musculus and bold"),
    ("the `OIC` task", "the <code>OIC</code> task", "the OIC task"),
    ("<script>alert(1)</script> & <b>b</b>", "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;b&lt;/b&gt;",
     "<script>alert(1)</script> & <b>b</b>"),
    ("[click](javascript:alert(1)) <https://example.org>", "click https://example.org", "click https://example.org"),
    ("![a *pixel*](https://tracker.example/p.png)", "a pixel", "a pixel"),
    ("\\*not emphasis\\* &amp; 5 * 3", "*not emphasis* &amp; 5 * 3", "*not emphasis* & 5 * 3"),
    ("# not a heading\n- nor a list", "# not a heading - nor a list", "# not a heading - nor a list"),
])
def test_a_title_is_inline_markdown_in_a_page_and_plain_text_elsewhere(written, html, plain):
    assert str(inline_markdown(written)) == html
    assert markdown_plain(written) == plain


def with_markdown(review: Path) -> Path:
    config = yaml.safe_load((review / "review.yaml").read_text(encoding="utf-8"))
    config.update(title=TITLE, question="Which variables influence memory in *Rattus norvegicus*?")
    (review / "review.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return review


def test_the_title_and_question_are_rendered_in_pages_and_plain_in_titles_and_the_feed(example_copy, tmp_path):
    site = tmp_path / "site"
    build(with_markdown(example_copy), site, environ={})
    home = lxml_html.fromstring((site / "index.html").read_bytes())
    heading = home.find(".//h1")
    assert heading.findtext("em") == "Mus musculus" and heading.findtext("code") == "Rattus"
    assert not heading.xpath(".//a | .//b | .//script")
    assert home.find(".//p[@class='question']/em").text == "Rattus norvegicus"
    plain = "Object-in-context memory in Mus musculus and Rattus <b>rats</b> x"
    for path in [site / "index.html", site / "protocol.html", *sorted((site / "records").glob("*.html"))[:2]]:
        page = lxml_html.fromstring(path.read_bytes())
        assert page.findtext(".//title").endswith(plain), path
        header = page.find(".//p[@class='site-title']")
        assert header.findtext("a/em") == "Mus musculus" and len(header.xpath(".//a")) == 1, path
        feed_link = page.find(".//link[@type='application/atom+xml']")
        assert feed_link.get("title") == f"{plain}: versions and new studies", path
    feed = etree.fromstring((site / "feed.xml").read_bytes(), etree.XMLParser(resolve_entities=False, no_network=True))
    assert feed.findtext("{*}title") == plain
    # Nowhere does a reader see the Markdown's asterisks or backticks.
    for path in site.rglob("*"):
        if path.suffix in (".html", ".xml", ".json", ".csv", ".svg") and "pagefind" not in path.parts:
            assert not re.search(r"\*Mus musculus\*|`Rattus`|\*Rattus norvegicus\*", path.read_text(encoding="utf-8")), path
