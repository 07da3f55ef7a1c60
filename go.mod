module github.com/lablup/perfbot

go 1.26.0

require (
	github.com/bradleyfalzon/ghinstallation/v2 v2.11.0 // indirect
	github.com/golang-jwt/jwt/v4 v4.5.0 // indirect
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/google/go-github/v62 v62.0.0 // indirect
	github.com/google/go-querystring v1.1.0 // indirect
	github.com/sethvargo/go-githubactions v1.3.2 // indirect
	github.com/yuin/goldmark v1.8.7 // indirect
	golang.org/x/oauth2 v0.38.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
