#!/usr/bin/env bash
# Regera requirements-lock.txt: todas as dependências, diretas e transitivas, numa versão exata.
#
#   bash scripts/atualizar_lock.sh
#
# Cria um ambiente novo (Python 3.11), instala o torch de CPU fixado e o que o primeiro comando do
# início rápido instala (requirements.txt e, sem dependências, requirements-nodeps.txt), SEM o lock,
# e congela o resultado. Depois, valide o lock novo com `.ci/run` num clone limpo antes de guardá-lo.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m venv "$tmp/venv"
# shellcheck disable=SC1091
. "$tmp/venv/bin/activate"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_QUIET=1
pip install torch==2.13.0
pip install -r requirements.txt
pip install --no-deps -r requirements-nodeps.txt
{
  echo "# Gerado por scripts/atualizar_lock.sh em $(date -u +%Y-%m-%d) (Python $(python -c 'import sys; print(".".join(map(str, sys.version_info[:3])))'), torch de CPU)."
  echo "# Todas as dependências, diretas e transitivas, em versões exatas. O primeiro comando do início"
  echo "# rápido usa este arquivo como restrição (-c). Não edite à mão: rode o script de novo."
  pip freeze --exclude-editable | sed -E 's/^torch==([0-9.]+)\+cpu$/torch==\1/' | LC_ALL=C sort -f
} > requirements-lock.txt
# a cópia que vai dentro do pacote (a célula de instalação dos notebooks a usa fora do repositório)
cp requirements-lock.txt lncc_llm/dados/requirements-lock.txt
echo "requirements-lock.txt: $(grep -c '==' requirements-lock.txt) pacotes"
# o Colab roda um Python mais novo: o lock tem de se resolver, com wheels, em 3.11.5, 3.12 e 3.13
python scripts/conferir_lock.py
