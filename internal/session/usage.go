package session

import (
	"strings"

	"github.com/nodwyn/nodwyn/internal/config"
	"github.com/nodwyn/nodwyn/internal/provider"
)

// DefaultContextWindow is the context window assumed for a model that
// neither [provider] context_window nor the table below knows.
const DefaultContextWindow = 128_000

// knownModel is what nodwyn knows of a well-known model: its context window
// and its list prices (dollars per million tokens) as its provider
// published them. The prices are an estimate, dated: check them, and set
// [provider.prices] to override.
type knownModel struct {
	prefix string
	window int
	prices config.Prices
}

// PricesDated is when the table's prices were read from the providers'
// price lists.
const PricesDated = "2026-12"

// knownModels is matched by the longest prefix of the model's name.
var knownModels = []knownModel{
	{"gpt-5-mini", 400_000, config.Prices{Input: 0.25, CachedInput: 0.025, Output: 2}},
	{"gpt-5-nano", 400_000, config.Prices{Input: 0.05, CachedInput: 0.005, Output: 0.4}},
	{"gpt-5", 400_000, config.Prices{Input: 1.25, CachedInput: 0.125, Output: 10}},
	{"gpt-4.1-mini", 1_047_576, config.Prices{Input: 0.4, CachedInput: 0.1, Output: 1.6}},
	{"gpt-4.1", 1_047_576, config.Prices{Input: 2, CachedInput: 0.5, Output: 8}},
	{"gpt-4o-mini", 128_000, config.Prices{Input: 0.15, CachedInput: 0.075, Output: 0.6}},
	{"gpt-4o", 128_000, config.Prices{Input: 2.5, CachedInput: 1.25, Output: 10}},
	{"o4-mini", 200_000, config.Prices{Input: 1.1, CachedInput: 0.275, Output: 4.4}},
	{"o3", 200_000, config.Prices{Input: 2, CachedInput: 0.5, Output: 8}},
	{"claude-opus-4", 200_000, config.Prices{Input: 15, CachedInput: 1.5, CacheWrite: 18.75, Output: 75}},
	{"claude-sonnet-4", 200_000, config.Prices{Input: 3, CachedInput: 0.3, CacheWrite: 3.75, Output: 15}},
	{"claude-haiku-4", 200_000, config.Prices{Input: 1, CachedInput: 0.1, CacheWrite: 1.25, Output: 5}},
	{"claude-3-5-haiku", 200_000, config.Prices{Input: 0.8, CachedInput: 0.08, CacheWrite: 1, Output: 4}},
}

// lookupModel finds a model in the table by the longest matching prefix
// (a provider prefix such as "openai/" is ignored).
func lookupModel(name string) (knownModel, bool) {
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	var best knownModel
	for _, m := range knownModels {
		if strings.HasPrefix(name, m.prefix) && len(m.prefix) > len(best.prefix) {
			best = m
		}
	}
	return best, best.prefix != ""
}

// contextWindow is the model's window: the configuration's, else the
// table's, else DefaultContextWindow.
func (s *Session) contextWindow() int {
	if s.opts.ContextWindow > 0 {
		return s.opts.ContextWindow
	}
	if m, ok := lookupModel(s.opts.ModelName); ok {
		return m.window
	}
	return DefaultContextWindow
}

// prices are the model's prices and whether there are any.
func (s *Session) prices() (config.Prices, bool) {
	if p := s.opts.Prices; p != (config.Prices{}) {
		return p, true
	}
	if m, ok := lookupModel(s.opts.ModelName); ok {
		return m.prices, true
	}
	return config.Prices{}, false
}

// cost is what u costs at the model's prices (ok false: no prices known).
func (s *Session) cost(u provider.Usage) (float64, bool) {
	p, ok := s.prices()
	if !ok {
		return 0, false
	}
	write := p.CacheWrite
	if write == 0 {
		write = p.Input
	}
	return (float64(u.InputTokens)*p.Input + float64(u.CacheReadTokens)*p.CachedInput +
		float64(u.CacheWriteTokens)*write + float64(u.OutputTokens)*p.Output) / 1e6, true
}

// Usage is the run's token usage so far, all its requests together (the
// judge's and the summaries' included).
func (s *Session) Usage() provider.Usage { return s.usage }
