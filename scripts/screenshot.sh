#!/usr/bin/env bash
# Captura de tela de uma página do livro compilado, com a rede FECHADA.
#
# Serve book/_build/html em 127.0.0.1 (python -m http.server) e abre a página no
# Chromium headless, com todos os hosts que não são locais bloqueados: se algo
# (MathJax, fontes, scripts) viesse de um CDN, falharia e apareceria na imagem.
#
# Uso:   scripts/screenshot.sh [PÁGINA] [SAÍDA.png]
#        scripts/screenshot.sh intro.html /tmp/intro.png      (padrões)
# Antes: jupyter-book build book
# Variáveis: CHROMIUM (binário), PORTA (porta local), LARGURA, ALTURA.
set -euo pipefail
cd "$(dirname "$0")/.."

pagina="${1:-intro.html}"
saida="${2:-/tmp/$(basename "${pagina%.html}").png}"
html_dir="book/_build/html"
porta="${PORTA:-8765}"
largura="${LARGURA:-1280}"
altura="${ALTURA:-4000}"
python="${PYTHON:-python3}"

if [ ! -f "$html_dir/$pagina" ]; then
  echo "Página não encontrada: $html_dir/$pagina (rode antes: jupyter-book build book)" >&2
  exit 1
fi

chromium="${CHROMIUM:-}"
if [ -z "$chromium" ]; then
  for c in chromium chromium-browser google-chrome; do
    if command -v "$c" >/dev/null 2>&1; then chromium="$c"; break; fi
  done
fi
if [ -z "$chromium" ]; then
  echo "Chromium não encontrado. No Debian/Ubuntu: apt-get install -y chromium" >&2
  exit 1
fi

perfil="$(mktemp -d)"
"$python" -m http.server "$porta" --bind 127.0.0.1 --directory "$html_dir" >/dev/null 2>&1 &
servidor=$!
trap 'kill "$servidor" 2>/dev/null || true; rm -rf "$perfil"' EXIT

# Espera o servidor responder (até ~5 s).
for _ in $(seq 50); do
  if "$python" -c "import urllib.request,sys; urllib.request.urlopen(sys.argv[1], timeout=1)" \
       "http://127.0.0.1:$porta/" >/dev/null 2>&1; then break; fi
  sleep 0.1
done

"$chromium" \
  --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$perfil" \
  --host-resolver-rules="MAP * ~NOTFOUND, EXCLUDE 127.0.0.1" \
  --window-size="$largura,$altura" \
  --virtual-time-budget=10000 \
  --hide-scrollbars \
  --screenshot="$saida" \
  "http://127.0.0.1:$porta/$pagina" 2>/dev/null

echo "Captura salva em $saida"
