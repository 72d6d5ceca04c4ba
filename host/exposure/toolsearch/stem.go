package toolsearch

// stem reduces an English word to its stem with the Porter (1980)
// algorithm, so "compresses", "compressed" and "compression" meet at
// "compress". The input must be lowercase; words that are not plain ASCII
// letters, or shorter than three letters, come back unchanged because the
// rules only describe English spelling.
func stem(word string) string {
	if len(word) <= 2 {
		return word
	}
	for i := 0; i < len(word); i++ {
		if word[i] < 'a' || word[i] > 'z' {
			return word
		}
	}
	s := porter{b: []byte(word)}
	s.step1a()
	s.step1b()
	s.step1c()
	s.step2()
	s.step3()
	s.step4()
	s.step5()
	return string(s.b)
}

// porter holds the word being stemmed. Every rule looks at a suffix and at
// the "measure" of what precedes it: the number of vowel-consonant runs.
type porter struct {
	b []byte
}

// consonant reports whether b[i] is a consonant. "y" is a consonant at the
// start of a word or after a vowel, and a vowel after a consonant (as in
// "happy").
func (s *porter) consonant(i int) bool {
	switch s.b[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !s.consonant(i-1)
	}
	return true
}

// measure counts the vowel-consonant sequences in b[:n].
func (s *porter) measure(n int) int {
	m := 0
	i := 0
	for i < n && s.consonant(i) {
		i++
	}
	for i < n {
		for i < n && !s.consonant(i) {
			i++
		}
		if i >= n {
			break
		}
		for i < n && s.consonant(i) {
			i++
		}
		m++
	}
	return m
}

// hasVowel reports whether b[:n] contains a vowel.
func (s *porter) hasVowel(n int) bool {
	for i := 0; i < n; i++ {
		if !s.consonant(i) {
			return true
		}
	}
	return false
}

// doubleConsonant reports whether b[:n] ends in a doubled consonant.
func (s *porter) doubleConsonant(n int) bool {
	return n >= 2 && s.b[n-1] == s.b[n-2] && s.consonant(n-1)
}

// cvc reports whether b[:n] ends consonant-vowel-consonant with the last
// consonant not w, x or y: the shape of short words like "hop" or "fil"
// that regain an "e" ("filing" → "file").
func (s *porter) cvc(n int) bool {
	if n < 3 || !s.consonant(n-1) || s.consonant(n-2) || !s.consonant(n-3) {
		return false
	}
	switch s.b[n-1] {
	case 'w', 'x', 'y':
		return false
	}
	return true
}

func (s *porter) ends(suffix string) bool {
	n := len(s.b)
	return n >= len(suffix) && string(s.b[n-len(suffix):]) == suffix
}

// stemLen is the length of the word without suffix.
func (s *porter) stemLen(suffix string) int { return len(s.b) - len(suffix) }

func (s *porter) replace(suffix, with string) {
	s.b = append(s.b[:s.stemLen(suffix)], with...)
}

func (s *porter) step1a() {
	switch {
	case s.ends("sses"):
		s.replace("sses", "ss")
	case s.ends("ies"):
		s.replace("ies", "i")
	case s.ends("ss"):
	case s.ends("s"):
		s.replace("s", "")
	}
}

func (s *porter) step1b() {
	if s.ends("eed") {
		if s.measure(s.stemLen("eed")) > 0 {
			s.replace("eed", "ee")
		}
		return
	}
	removed := false
	for _, suffix := range []string{"ed", "ing"} {
		if s.ends(suffix) && s.hasVowel(s.stemLen(suffix)) {
			s.replace(suffix, "")
			removed = true
			break
		}
	}
	if !removed {
		return
	}
	n := len(s.b)
	switch {
	case s.ends("at"), s.ends("bl"), s.ends("iz"):
		s.b = append(s.b, 'e')
	case s.doubleConsonant(n):
		switch s.b[n-1] {
		case 'l', 's', 'z':
		default:
			s.b = s.b[:n-1]
		}
	case s.measure(n) == 1 && s.cvc(n):
		s.b = append(s.b, 'e')
	}
}

func (s *porter) step1c() {
	if s.ends("y") && s.hasVowel(s.stemLen("y")) {
		s.b[len(s.b)-1] = 'i'
	}
}

// suffixRule replaces Suffix by With when the measure of the rest exceeds
// the step's minimum.
type suffixRule struct{ suffix, with string }

// Steps 2 and 3 map derivational suffixes to simpler ones. Longer
// suffixes come first: the first suffix that matches decides, whether or
// not its measure condition holds.
var (
	step2Rules = []suffixRule{
		{"ational", "ate"}, {"tional", "tion"}, {"enci", "ence"}, {"anci", "ance"},
		{"izer", "ize"}, {"bli", "ble"}, {"alli", "al"}, {"entli", "ent"},
		{"eli", "e"}, {"ousli", "ous"}, {"ization", "ize"}, {"ation", "ate"},
		{"ator", "ate"}, {"alism", "al"}, {"iveness", "ive"}, {"fulness", "ful"},
		{"ousness", "ous"}, {"aliti", "al"}, {"iviti", "ive"}, {"biliti", "ble"},
		{"logi", "log"},
	}
	step3Rules = []suffixRule{
		{"icate", "ic"}, {"ative", ""}, {"alize", "al"}, {"iciti", "ic"},
		{"ical", "ic"}, {"ful", ""}, {"ness", ""},
	}
	step4Suffixes = []string{
		"al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment",
		"ent", "ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize",
	}
)

func (s *porter) applyRules(rules []suffixRule) {
	best := -1
	for i, r := range rules {
		if s.ends(r.suffix) && (best < 0 || len(r.suffix) > len(rules[best].suffix)) {
			best = i
		}
	}
	if best >= 0 && s.measure(s.stemLen(rules[best].suffix)) > 0 {
		s.replace(rules[best].suffix, rules[best].with)
	}
}

func (s *porter) step2() { s.applyRules(step2Rules) }

func (s *porter) step3() { s.applyRules(step3Rules) }

func (s *porter) step4() {
	best := ""
	for _, suffix := range step4Suffixes {
		if s.ends(suffix) && len(suffix) > len(best) {
			best = suffix
		}
	}
	if best == "" {
		return
	}
	n := s.stemLen(best)
	if s.measure(n) <= 1 {
		return
	}
	if best == "ion" && (n == 0 || (s.b[n-1] != 's' && s.b[n-1] != 't')) {
		return
	}
	s.b = s.b[:n]
}

func (s *porter) step5() {
	if s.ends("e") {
		n := s.stemLen("e")
		if m := s.measure(n); m > 1 || (m == 1 && !s.cvc(n)) {
			s.b = s.b[:n]
		}
	}
	n := len(s.b)
	if n > 0 && s.b[n-1] == 'l' && s.doubleConsonant(n) && s.measure(n) > 1 {
		s.b = s.b[:n-1]
	}
}
