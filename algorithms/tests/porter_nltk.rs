//! `text::porter_stem` gives NLTK's own stem for every word of `fixtures/porter_nltk.tsv`,
//! which NLTK 3.9.1's default `PorterStemmer()` wrote (see the fixture's header). Offline.

use algorithms::text::porter_stem;

const TABLE: &str = include_str!("fixtures/porter_nltk.tsv");

#[test]
fn every_stem_of_the_fixture_is_nltks() {
    let mut checked = 0;
    let mut wrong = Vec::new();
    for (index, line) in TABLE.lines().enumerate() {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let (word, nltk) = line.split_once('\t').unwrap_or_else(|| panic!("line {} has no tab", index + 1));
        let ours = porter_stem(word);
        if ours != nltk {
            wrong.push(format!("{word}: NLTK `{nltk}`, ours `{ours}`"));
        }
        checked += 1;
    }
    assert!(checked > 4000, "the fixture holds {checked} words");
    assert!(wrong.is_empty(), "{} of {checked} stems differ:\n{}", wrong.len(), wrong.join("\n"));
}
