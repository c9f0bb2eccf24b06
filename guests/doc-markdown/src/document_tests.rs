//! The rules of `document::parse`, one behaviour per test.

use guest_sdk::markdown::{Callout, CodeBlock, Router, Section};

use super::parse;

/// `(level, title, line)` of every section.
fn outline(text: &str) -> Vec<(u8, String, usize)> {
    parse(text).sections.into_iter().map(|section| (section.level, section.title, section.line)).collect()
}

fn headings(text: &str) -> Vec<Vec<String>> {
    parse(text).sections.into_iter().map(|section| section.headings).collect()
}

fn only_section(text: &str) -> Section {
    let mut sections = parse(text).sections;
    assert_eq!(sections.len(), 1, "{sections:#?}");
    sections.remove(0)
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|item| item.to_string()).collect()
}

#[test]
fn frontmatter_gives_the_title_and_description_and_keeps_every_key() {
    let parsed = parse("---\ntitle: updateTag\ndescription: 'API Reference: updateTag.'\nnav_title: Tag\n---\n\nText");
    assert_eq!(parsed.title.as_deref(), Some("updateTag"));
    assert_eq!(parsed.description.as_deref(), Some("API Reference: updateTag."));
    assert_eq!(parsed.frontmatter.len(), 3);
    assert_eq!(parsed.frontmatter["nav_title"], "Tag");
}

#[test]
fn an_empty_title_in_the_frontmatter_is_no_title() {
    let parsed = parse("---\ntitle: ''\ndescription:\n---");
    assert_eq!((parsed.title, parsed.description), (None, None));
}

#[test]
fn an_unclosed_frontmatter_is_content() {
    let parsed = parse("---\ntitle: A\n\nText");
    assert_eq!(parsed.title, None);
    assert!(parsed.frontmatter.is_empty());
    assert_eq!(only_section("---\ntitle: A\n\nText").content, "---\ntitle: A\n\nText");
}

#[test]
fn one_to_four_hashes_start_sections_of_that_level() {
    let text = "# One\n## Two\n### Three\n#### Four\n##### Five\n###### Six";
    assert_eq!(
        outline(text),
        [(1, "One".into(), 1), (2, "Two".into(), 2), (3, "Three".into(), 3), (4, "Four".into(), 4)]
    );
}

#[test]
fn five_and_six_hashes_are_content_of_the_section_above() {
    assert_eq!(only_section("#### Four\n##### Five\ntext\n###### Six").content, "##### Five\ntext\n###### Six");
}

#[test]
fn a_heading_needs_a_space_after_its_hashes() {
    assert_eq!(outline("#hashtag\n\n## Real"), [(0, String::new(), 0), (2, "Real".into(), 3)]);
}

#[test]
fn the_heading_path_runs_from_the_nearest_h1_to_the_heading() {
    let text = "# updateTag\n## Usage\n### Inside\n## Returns\n#### Deep\n# Other\n### Skipped";
    assert_eq!(
        headings(text),
        [
            strings(&["updateTag"]),
            strings(&["updateTag", "Usage"]),
            strings(&["updateTag", "Usage", "Inside"]),
            strings(&["updateTag", "Returns"]),
            strings(&["updateTag", "Returns", "Deep"]),
            strings(&["Other"]),
            strings(&["Other", "Skipped"]),
        ]
    );
}

#[test]
fn without_an_h1_the_frontmatter_title_heads_the_path() {
    let text = "---\ntitle: updateTag\n---\n\nIntro.\n\n## Usage\n### Detail";
    assert_eq!(
        headings(text),
        [strings(&["updateTag"]), strings(&["updateTag", "Usage"]), strings(&["updateTag", "Usage", "Detail"])]
    );
}

#[test]
fn with_an_h1_the_frontmatter_title_stays_out_of_heading_paths() {
    let text = "---\ntitle: Page\n---\n## Before\n# Real\n## After";
    assert_eq!(headings(text), [strings(&["Before"]), strings(&["Real"]), strings(&["Real", "After"])]);
}

#[test]
fn without_an_h1_or_a_title_the_path_starts_at_the_top_heading() {
    assert_eq!(headings("## Usage\n### Detail"), [strings(&["Usage"]), strings(&["Usage", "Detail"])]);
}

#[test]
fn backticks_and_closing_hashes_leave_the_title() {
    assert_eq!(outline("# `updateTag` ##")[0].1, "updateTag");
}

#[test]
fn line_numbers_are_the_headings_lines_in_the_file_frontmatter_counted() {
    assert_eq!(
        outline("---\ntitle: A\n---\n\n## Usage\n\ntext\n\n## Returns")[..],
        [(2, "Usage".into(), 5), (2, "Returns".into(), 9)]
    );
}

#[test]
fn a_section_holds_its_own_text_trimmed_up_to_the_next_heading_of_any_level() {
    let sections = parse("## Usage\n\nFirst.\n\nSecond.\n\n### Detail\n\nDeeper.\n\n## Next\n").sections;
    let contents: Vec<&str> = sections.iter().map(|section| section.content.as_str()).collect();
    assert_eq!(contents, ["First.\n\nSecond.", "Deeper.", ""]);
}

#[test]
fn code_blocks_are_collected_with_the_first_word_of_their_info_string() {
    let section =
        only_section("## Usage\n\n```tsx filename=\"app/page.tsx\" switcher\nexport default 1\n```\n\n~~~\nplain\n~~~");
    assert_eq!(
        section.code_blocks,
        [
            CodeBlock { language: "tsx".into(), code: "export default 1".into() },
            CodeBlock { language: String::new(), code: "plain".into() },
        ]
    );
    assert!(section.content.contains("```tsx filename=\"app/page.tsx\" switcher\nexport default 1\n```"));
}

#[test]
fn a_heading_inside_a_code_block_is_code() {
    let text = "## Script\n\n```bash\n# not a heading\n## nor this\n```\n\n## After";
    assert_eq!(outline(text), [(2, "Script".into(), 1), (2, "After".into(), 8)]);
    assert_eq!(parse(text).sections[0].code_blocks[0].code, "# not a heading\n## nor this");
}

#[test]
fn a_fence_closes_only_with_its_own_marker_at_least_as_long() {
    let text = "````md\n```js\n# inside\n```\n~~~~\n````\n# Out";
    let sections = parse(text).sections;
    assert_eq!(sections[0].code_blocks[0].code, "```js\n# inside\n```\n~~~~");
    assert_eq!(sections[1].title, "Out");
}

#[test]
fn an_unclosed_fence_runs_to_the_end_of_the_document() {
    let section = only_section("## A\n\n```js\nconst a = 1\n\n## Not a heading");
    assert_eq!(
        section.code_blocks,
        [CodeBlock { language: "js".into(), code: "const a = 1\n\n## Not a heading".into() }]
    );
}

#[test]
fn an_indented_fence_drops_its_indentation_from_the_code() {
    let section = only_section("## A\n\n1. Run:\n\n   ```bash\n   npm run dev\n     --turbo\n   ```");
    assert_eq!(section.code_blocks[0].code, "npm run dev\n  --turbo");
}

#[test]
fn a_callout_is_the_whole_blockquote_without_its_label() {
    let text = "## Types\n\n> **Good to know**\n>\n> - Static routes resolve `params` to `{}`.\n> - Types are generated.\n\nAfter.";
    let section = only_section(text);
    assert_eq!(
        section.callouts,
        [Callout {
            kind: "good-to-know".into(),
            text: "- Static routes resolve `params` to `{}`.\n- Types are generated.".into()
        }]
    );
    assert!(section.content.starts_with("> **Good to know**\n>\n> - Static"), "{}", section.content);
}

#[test]
fn two_blockquotes_apart_are_two_callouts() {
    let section = only_section("## A\n\n> **Note**: one\n\n> **Warning:** two\n> more");
    let kinds: Vec<(&str, &str)> =
        section.callouts.iter().map(|callout| (callout.kind.as_str(), callout.text.as_str())).collect();
    assert_eq!(kinds, [("note", "one"), ("warning", "two\nmore")]);
}

#[test]
fn a_callout_inside_a_code_block_is_code() {
    assert!(only_section("## A\n\n```md\n> **Note**: example\n```").callouts.is_empty());
}

#[test]
fn a_plain_blockquote_is_content_and_not_a_callout() {
    let section = only_section("## A\n\n> A quotation.");
    assert!(section.callouts.is_empty());
    assert_eq!(section.content, "> A quotation.");
}

#[test]
fn a_heading_inside_app_only_or_pages_only_belongs_to_that_router() {
    let text =
        "## Shared\n<AppOnly>\n\n## App\n\n</AppOnly>\n<PagesOnly>\n\n## Pages\n\n</PagesOnly>\n\n## Shared again";
    let routers: Vec<Router> = parse(text).sections.iter().map(|section| section.router).collect();
    assert_eq!(routers, [Router::Both, Router::App, Router::Pages, Router::Both]);
}

#[test]
fn router_tag_lines_leave_the_content_without_gaps() {
    let section = only_section("## A\n\nBefore.\n\n<AppOnly>\n\nApp text.\n\n</AppOnly>\n\nAfter.");
    assert_eq!(section.content, "Before.\n\nApp text.\n\nAfter.");
}

#[test]
fn inline_router_tags_stay_in_the_text() {
    let section = only_section("## A\n\nUse <AppOnly>Route Handlers</AppOnly><PagesOnly>API Routes</PagesOnly>.");
    assert_eq!(section.content, "Use <AppOnly>Route Handlers</AppOnly><PagesOnly>API Routes</PagesOnly>.");
}

#[test]
fn router_tags_inside_code_are_code() {
    let text = "## A\n\n```mdx\n<AppOnly>\n\n## Inside\n```\n\n## B";
    let sections = parse(text).sections;
    assert_eq!(sections[1].router, Router::Both);
    assert_eq!(sections[0].code_blocks[0].code, "<AppOnly>\n\n## Inside");
}

#[test]
fn a_closing_tag_that_closes_nothing_is_ignored() {
    let text = "</AppOnly>\n<PagesOnly>\n## In pages\n</AppOnly>\n## Still pages";
    let routers: Vec<Router> = parse(text).sections.iter().map(|section| section.router).collect();
    assert_eq!(routers, [Router::Pages, Router::Pages]);
}

#[test]
fn the_text_before_the_first_heading_is_a_level_0_preamble_at_line_0() {
    let parsed = parse("---\ntitle: updateTag\n---\n\n`updateTag` updates a tag.\n\n## Usage");
    let preamble = &parsed.sections[0];
    assert_eq!((preamble.level, preamble.line, preamble.title.as_str()), (0, 0, "updateTag"));
    assert_eq!(preamble.headings, strings(&["updateTag"]));
    assert_eq!(preamble.content, "`updateTag` updates a tag.");
}

#[test]
fn a_blank_preamble_is_left_out() {
    assert_eq!(outline("\n\n  \n## Usage"), [(2, "Usage".into(), 4)]);
    assert_eq!(outline("---\ntitle: A\n---\n\n## Usage"), [(2, "Usage".into(), 5)]);
}

#[test]
fn mdx_comment_lines_are_not_content() {
    let text = "---\ntitle: A\n---\n\n{/* The content of this doc is shared. */}\n\n## Usage\n\n{/* note */}\nText.";
    assert_eq!(outline(text), [(2, "Usage".into(), 7)]);
    assert_eq!(parse(text).sections[0].content, "Text.");
}

#[test]
fn crlf_line_endings_read_like_lf() {
    let crlf = "---\r\ntitle: A\r\n---\r\n\r\n## Usage\r\n\r\n```js\r\na()\r\n```\r\n> **Note**: b\r\n";
    assert_eq!(parse(crlf), parse(&crlf.replace("\r\n", "\n")));
    assert_eq!(parse(crlf).sections[0].code_blocks[0].code, "a()");
}

#[test]
fn empty_input_has_no_sections() {
    let parsed = parse("");
    assert!(parsed.sections.is_empty() && parsed.frontmatter.is_empty());
    assert_eq!((parsed.title, parsed.description), (None, None));
}

#[test]
fn a_byte_order_mark_is_not_content() {
    let parsed = parse("\u{feff}---\ntitle: A\n---\n# T");
    assert_eq!(parsed.title.as_deref(), Some("A"));
    assert_eq!(outline("\u{feff}# T"), [(1, "T".into(), 1)]);
}
