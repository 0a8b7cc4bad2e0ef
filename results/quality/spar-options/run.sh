#!/bin/bash
# Spar's optimizer-aware options, one at a time, on the real-text distillation at 1.6% (a short,
# few-seed ablation made beside other work on a shared 2-core machine: 30 steps, seeds 101-102;
# scripts/quality_protocol.py --grid spar-options is the longer protocol version of it).
#   results/quality/spar-options/run.sh [SEEDS...]     then  summarize.py
set -euo pipefail
cd "$(dirname "$0")/../../.."
out=results/quality/spar-options/runs
mkdir -p "$out"
seeds=("${@:-101 102}")
workload=(--kind distill --preset sim --teacher finetuned --lora-rank 16 --prompt-tokens 16
          --gen-tokens 16 --prompts-per-worker 4 --eval-prompts 64 --lr 0.003
          --schedule linear_warmup --warmup 5 --steps 30 --workers 2 --eval-every 5)
declare -A arms=(
  [hilo-spar]="dtype=bf16"
  [warm8]="dtype=bf16;sketch=8;warm=true"
  [precond]="allocation=preconditioned;dtype=bf16"
  [cov4]="coverage=4;dtype=bf16"
  [efr1]="dtype=bf16;ef_max_ratio=1"
)
for seed in ${seeds[@]}; do
  f="$out/text-distill-full-s$seed.csv"  # full sync of the same seed, for scale
  if [ ! -f "$f" ]; then
    build/models/sync-curves "${workload[@]}" --seed "$seed" --strategy full --compressor dense \
      --options dtype=bf16 --out "$f.part"
    mv "$f.part" "$f"
  fi
  for arm in hilo-spar warm8 precond cov4 efr1; do
    f="$out/text-distill-$arm-s$seed.csv"
    [ -f "$f" ] && continue
    build/models/sync-curves "${workload[@]}" --seed "$seed" --strategy hilo --compressor spar \
      --options "${arms[$arm]}" --budget 1.6% --out "$f.part"
    mv "$f.part" "$f"
  done
done
