package auth

// FixedTokens are bearer tokens known at start and never reloaded: names
// by token. `peloton dev` authenticates its one token this way, and its
// regions (which have no certificates) one another.
func FixedTokens(names map[string]string) *Tokens {
	byHash := make(map[string]string, len(names))
	for token, name := range names {
		byHash[HashToken(token)] = name
	}
	return &Tokens{file: &watchedFile[map[string]string]{value: byHash}}
}
