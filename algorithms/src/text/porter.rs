//! The Porter stemmer exactly as NLTK runs it by default (`PorterStemmer()`, mode
//! `NLTK_EXTENSIONS`, NLTK 3.9.1), because LoCoMo's official token F1 stems with it: a stem
//! that differs from NLTK's by one letter changes a benchmark score.
//!
//! The algorithm is Porter's (1980, "An algorithm for suffix stripping"), with the departures
//! NLTK's default mode makes, each marked `NLTK:` below. It works on Unicode scalar values as
//! Python works on code points; any character other than `a e i o u` (and `y` after a
//! consonant) is a consonant, digits and accented letters included. It never fails and never
//! panics. `algorithms/tests/porter_nltk.rs` holds it to NLTK's own output.

/// NLTK: words mapped straight to a fixed stem, skipping the algorithm (its "irregular forms").
/// Only a word written exactly so (lowercase) is looked up.
const IRREGULAR: [(&str, &str); 16] = [
    ("sky", "sky"),
    ("skies", "sky"),
    ("dying", "die"),
    ("lying", "lie"),
    ("tying", "tie"),
    ("news", "news"),
    ("innings", "inning"),
    ("inning", "inning"),
    ("outings", "outing"),
    ("outing", "outing"),
    ("cannings", "canning"),
    ("canning", "canning"),
    ("howe", "howe"),
    ("proceed", "proceed"),
    ("exceed", "exceed"),
    ("succeed", "succeed"),
];

/// The stem of `word` as NLTK's default `PorterStemmer().stem(word)` gives it: lowercased first,
/// words of one or two characters returned lowercased and otherwise untouched.
pub fn porter_stem(word: &str) -> String {
    if let Some((_, stem)) = IRREGULAR.iter().find(|(form, _)| *form == word) {
        return (*stem).to_owned();
    }
    let lower = word.to_lowercase();
    // NLTK measures the length of the word as given, before lowercasing.
    if word.chars().count() <= 2 {
        return lower;
    }
    let mut letters = Word(lower.chars().collect());
    letters.step1a();
    letters.step1b();
    letters.step1c();
    letters.step2();
    letters.step3();
    letters.step4();
    letters.step5a();
    letters.step5b();
    letters.0.into_iter().collect()
}

/// Which condition a suffix rule asks of the stem left when the suffix is cut.
#[derive(Clone, Copy)]
enum Condition {
    /// m > 0.
    Positive,
    /// m > 1.
    AboveOne,
    /// m > 1 and the stem ends in `s` or `t` (step 4's `-ion`).
    AboveOneAfterSOrT,
    /// NLTK: m > 0 of the stem with the suffix's first letter kept (`-logi`, so that `geo` and
    /// `theo` count like `archaeo`).
    PositiveKeepingOne,
}

/// A rule: cut `suffix`, put `replacement` in its place when the condition holds.
type Rule = (&'static str, &'static str, Condition);

struct Word(Vec<char>);

impl Word {
    fn ends_with(&self, suffix: &str) -> bool {
        let suffix: Vec<char> = suffix.chars().collect();
        self.0.ends_with(&suffix)
    }

    fn len(&self) -> usize {
        self.0.len()
    }

    /// Replaces the last `cut` characters with `replacement`.
    fn replace_end(&mut self, cut: usize, replacement: &str) {
        self.0.truncate(self.0.len().saturating_sub(cut));
        self.0.extend(replacement.chars());
    }

    /// Applies the first rule whose suffix the word ends with, if its condition holds; either
    /// way no later rule is tried (Porter: "the longest matching suffix" decides).
    fn apply_first(&mut self, rules: &[Rule]) {
        let Some(&(suffix, replacement, condition)) = rules.iter().find(|(suffix, ..)| self.ends_with(suffix)) else {
            return;
        };
        let cut = suffix.chars().count();
        let stem = &self.0[..self.len() - cut];
        let holds = match condition {
            Condition::Positive => measure(stem) > 0,
            Condition::AboveOne => measure(stem) > 1,
            Condition::AboveOneAfterSOrT => measure(stem) > 1 && matches!(stem.last(), Some('s' | 't')),
            Condition::PositiveKeepingOne => measure(&self.0[..self.len() - cut + 1]) > 0,
        };
        if holds {
            self.replace_end(cut, replacement);
        }
    }

    /// Plurals: `-sses` → `-ss`, `-ies` → `-i`, `-ss` kept, `-s` dropped.
    fn step1a(&mut self) {
        // NLTK: a four-letter `-ies` word keeps its `e` ("dies" → "die", not "di").
        if self.len() == 4 && self.ends_with("ies") {
            self.replace_end(3, "ie");
            return;
        }
        for (suffix, replacement) in [("sses", "ss"), ("ies", "i"), ("ss", "ss"), ("s", "")] {
            if self.ends_with(suffix) {
                self.replace_end(suffix.len(), replacement);
                return;
            }
        }
    }

    /// `-eed`, `-ed`, `-ing`, and the tidying after the last two.
    fn step1b(&mut self) {
        // NLTK: `-ied` → `-ie` in a four-letter word ("died"), `-i` otherwise ("spied").
        if self.ends_with("ied") {
            self.replace_end(3, if self.len() == 4 { "ie" } else { "i" });
            return;
        }
        if self.ends_with("eed") {
            if measure(&self.0[..self.len() - 3]) > 0 {
                self.replace_end(1, "");
            }
            return;
        }
        let cut = if self.ends_with("ed") {
            2
        } else if self.ends_with("ing") {
            3
        } else {
            return;
        };
        if !contains_vowel(&self.0[..self.len() - cut]) {
            return;
        }
        self.replace_end(cut, "");
        if self.ends_with("at") || self.ends_with("bl") || self.ends_with("iz") {
            self.replace_end(0, "e");
        } else if ends_double_consonant(&self.0) {
            if !matches!(self.0.last(), Some('l' | 's' | 'z')) {
                self.replace_end(1, "");
            }
        } else if measure(&self.0) == 1 && ends_cvc(&self.0) {
            self.replace_end(0, "e");
        }
    }

    /// NLTK: a final `y` becomes `i` after a consonant that is not the word's only letter
    /// ("happy" → "happi", "enjoy" and "by" kept); Porter asked only for a vowel before it.
    fn step1c(&mut self) {
        let n = self.len();
        if n > 2 && self.0[n - 1] == 'y' && is_consonant(&self.0, n - 2) {
            self.replace_end(1, "i");
        }
    }

    /// Double suffixes to single ones (`-ization` → `-ize`), when m > 0.
    fn step2(&mut self) {
        use Condition::{Positive, PositiveKeepingOne};
        // NLTK: `-alli` → `-al` is tried first, and its result goes through step 2 again.
        if self.ends_with("alli") && measure(&self.0[..self.len() - 4]) > 0 {
            self.replace_end(2, "");
            return self.step2();
        }
        self.apply_first(&[
            ("ational", "ate", Positive),
            ("tional", "tion", Positive),
            ("enci", "ence", Positive),
            ("anci", "ance", Positive),
            ("izer", "ize", Positive),
            // NLTK (as Porter's later versions): `-bli` → `-ble`, where the paper had `-abli`.
            ("bli", "ble", Positive),
            ("alli", "al", Positive),
            ("entli", "ent", Positive),
            ("eli", "e", Positive),
            ("ousli", "ous", Positive),
            ("ization", "ize", Positive),
            ("ation", "ate", Positive),
            ("ator", "ate", Positive),
            ("alism", "al", Positive),
            ("iveness", "ive", Positive),
            ("fulness", "ful", Positive),
            ("ousness", "ous", Positive),
            ("aliti", "al", Positive),
            ("iviti", "ive", Positive),
            ("biliti", "ble", Positive),
            // NLTK: two rules more.
            ("fulli", "ful", Positive),
            ("logi", "log", PositiveKeepingOne),
        ]);
    }

    /// `-icate`, `-ative`, `-alize`, `-iciti`, `-ical`, `-ful`, `-ness`, when m > 0.
    fn step3(&mut self) {
        use Condition::Positive;
        self.apply_first(&[
            ("icate", "ic", Positive),
            ("ative", "", Positive),
            ("alize", "al", Positive),
            ("iciti", "ic", Positive),
            ("ical", "ic", Positive),
            ("ful", "", Positive),
            ("ness", "", Positive),
        ]);
    }

    /// Drops the last suffix when m > 1.
    fn step4(&mut self) {
        use Condition::{AboveOne, AboveOneAfterSOrT};
        self.apply_first(&[
            ("al", "", AboveOne),
            ("ance", "", AboveOne),
            ("ence", "", AboveOne),
            ("er", "", AboveOne),
            ("ic", "", AboveOne),
            ("able", "", AboveOne),
            ("ible", "", AboveOne),
            ("ant", "", AboveOne),
            ("ement", "", AboveOne),
            ("ment", "", AboveOne),
            ("ent", "", AboveOne),
            ("ion", "", AboveOneAfterSOrT),
            ("ou", "", AboveOne),
            ("ism", "", AboveOne),
            ("ate", "", AboveOne),
            ("iti", "", AboveOne),
            ("ous", "", AboveOne),
            ("ive", "", AboveOne),
            ("ize", "", AboveOne),
        ]);
    }

    /// A final `e` goes when m > 1, or when m = 1 and the stem does not end consonant–vowel–
    /// consonant (both conditions are tried, unlike step 1b's `-eed`/`-ed`).
    fn step5a(&mut self) {
        if !self.ends_with("e") {
            return;
        }
        let stem = &self.0[..self.len() - 1];
        let m = measure(stem);
        if m > 1 || (m == 1 && !ends_cvc(stem)) {
            self.replace_end(1, "");
        }
    }

    /// `-ll` → `-l` when m > 1, measured on the word less one `l`.
    fn step5b(&mut self) {
        if self.ends_with("ll") && measure(&self.0[..self.len() - 1]) > 1 {
            self.replace_end(1, "");
        }
    }
}

/// Porter's consonant: not `a e i o u`, and a `y` only at the start or after a vowel. A `y` is a consonant exactly when the letter before it is not, so along a run of
/// `y`s the answer alternates from the letter before the run (or from the word's start, where
/// `y` is a consonant); walking the run, not recursing, keeps a long run of `y`s off the stack.
fn is_consonant(word: &[char], index: usize) -> bool {
    let vowel = |letter: char| matches!(letter, 'a' | 'e' | 'i' | 'o' | 'u');
    if word[index] != 'y' {
        return !vowel(word[index]);
    }
    let mut start = index;
    while start > 0 && word[start - 1] == 'y' {
        start -= 1;
    }
    let first = start == 0 || vowel(word[start - 1]);
    if (index - start).is_multiple_of(2) { first } else { !first }
}

/// Which letters of `stem` are consonants, in one pass.
fn consonants(stem: &[char]) -> Vec<bool> {
    let mut kinds: Vec<bool> = Vec::with_capacity(stem.len());
    for (index, &letter) in stem.iter().enumerate() {
        let consonant = match letter {
            'a' | 'e' | 'i' | 'o' | 'u' => false,
            'y' => index == 0 || !kinds[index - 1],
            _ => true,
        };
        kinds.push(consonant);
    }
    kinds
}

/// Porter's measure m of a stem `[C](VC){m}[V]`: how many vowel runs are followed by a
/// consonant.
fn measure(stem: &[char]) -> usize {
    consonants(stem).windows(2).filter(|pair| !pair[0] && pair[1]).count()
}

/// Porter's `*v*`: the stem holds a vowel.
fn contains_vowel(stem: &[char]) -> bool {
    consonants(stem).contains(&false)
}

/// Porter's `*d`: the stem ends with two equal consonants.
fn ends_double_consonant(stem: &[char]) -> bool {
    let n = stem.len();
    n >= 2 && stem[n - 1] == stem[n - 2] && is_consonant(stem, n - 1)
}

/// Porter's `*o`: the stem ends consonant–vowel–consonant, the last not `w`, `x` or `y`; NLTK:
/// or the stem is just vowel–consonant (any consonant), so "are", "ice", "use" keep their `e`.
fn ends_cvc(stem: &[char]) -> bool {
    let n = stem.len();
    let three = n >= 3
        && is_consonant(stem, n - 3)
        && !is_consonant(stem, n - 2)
        && is_consonant(stem, n - 1)
        && !matches!(stem[n - 1], 'w' | 'x' | 'y');
    three || (n == 2 && !is_consonant(stem, 0) && is_consonant(stem, 1))
}

#[cfg(test)]
#[path = "porter_tests.rs"]
mod tests;
