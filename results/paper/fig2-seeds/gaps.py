import csv, statistics as st
files = {'21 (fig2)': 'results/paper/fig2/sweep.csv', '2': 'results/paper/fig2-seeds/seed-2/sweep.csv',
         '3': 'results/paper/fig2-seeds/seed-3/sweep.csv'}
budgets = {'hilo-spar': ['5%', '15%', '30%', '60%'], 'hilo-topk': ['5%', '15%', '30%', '60%'],
           'hilo-powersgd': ['10%', '20%', '30%', '50%']}
gap = {}
print('seed        arm             budget  %bytes   final KL   full KL   gap to full')
for seed, f in files.items():
    rows = list(csv.DictReader(open(f, newline='')))
    for r in rows:
        if r['arm'] == 'full':
            continue
        b = r['arms[%s].budget' % r['arm']]
        if b not in budgets[r['arm']]:
            continue
        full = [x for x in rows if x['combo'] == r['combo'] and x['arm'] == 'full'][0]
        q, fq = float(r['final_quality']), float(full['final_quality'])
        g = q / fq - 1
        gap.setdefault((r['arm'], b), []).append(g)
        print('%-11s %-15s %6s %7.2f %10.4f %9.4f %+10.1f%%' % (seed, r['arm'], b,
              100 * float(r['fraction_of_adapter_bytes']), q, fq, 100 * g))
print()
print('arm             budget   mean gap   sd    (3 seeds)')
for (a, b), g in sorted(gap.items(), key=lambda kv: (kv[0][0], float(kv[0][1][:-1]))):
    print('%-15s %6s %+9.1f%% %5.1f%%' % (a, b, 100 * st.mean(g), 100 * st.stdev(g)))
