package provider

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A request's temperature is sent by each API when set, and not at all
// when nil (the provider's default); Anthropic leaves it out with thinking.
func TestTemperatureIsSentWhenSet(t *testing.T) {
	var body string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		body = string(b)
		w.WriteHeader(http.StatusBadRequest) // the body is all this test needs
		io.WriteString(w, `{"error":{"message":"no"}}`)
	}))
	defer srv.Close()
	temp := 0.25
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Provider: "openai", Model: "m", BaseURL: srv.URL + "/v1", APIKey: "k"}, `"temperature":0.25`},
		{Config{Provider: "openai", API: "responses", Model: "m", BaseURL: srv.URL + "/v1", APIKey: "k"}, `"temperature":0.25`},
		{Config{Provider: "anthropic", Model: "m", BaseURL: srv.URL, APIKey: "k"}, `"temperature":0.25`},
		{Config{Provider: "anthropic", Model: "m", BaseURL: srv.URL, APIKey: "k", Reasoning: "low"}, ""},
	} {
		c.cfg.MaxRetries = -1
		m, err := New(c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, tp := range []*float64{&temp, nil} {
			body = ""
			m.Stream(context.Background(), Request{Temperature: tp, Messages: []Message{{Role: RoleUser, Content: "hi"}}}, func(Delta) {})
			has := strings.Contains(body, `"temperature"`)
			if want := tp != nil && c.want != ""; has != want || (want && !strings.Contains(body, c.want)) {
				t.Errorf("%s %s reasoning %q, temperature %v: body %.200s", c.cfg.Provider, c.cfg.API, c.cfg.Reasoning, tp, body)
			}
		}
	}
}
