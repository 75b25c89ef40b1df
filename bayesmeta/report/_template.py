"""The report's page template (Jinja2, autoescaped) and stylesheet: no script, no external
resource, readable on screen and on paper.

:data:`PAGE_OPEN` and :data:`PAGE_CLOSE` are the page skeleton (doctype, head with the
inline stylesheet, ``<div class="bm-report">``) shared by every page bayesmeta writes: the
metric report (:data:`TEMPLATE`) and a rendered vignette (:data:`VIGNETTE_TEMPLATE`).
"""

CSS = """
.bm-report { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif;
  color: #222; max-width: 1100px; margin: 0 auto; padding: 0 1em 3em; line-height: 1.4; }
.bm-report h1 { font-size: 1.6em; margin-bottom: 0.2em; }
.bm-report h2 { font-size: 1.25em; border-bottom: 2px solid #ddd; padding-bottom: 0.2em;
  margin-top: 2em; }
.bm-report h3 { font-size: 1.0em; margin: 1.2em 0 0.3em; }
.bm-report .sub { color: #555; margin-top: 0; }
.bm-report table { border-collapse: collapse; font-size: 0.82em; margin: 0.4em 0; }
.bm-report th, .bm-report td { border-bottom: 1px solid #e3e3e3; padding: 2px 8px;
  text-align: left; vertical-align: middle; }
.bm-report td.num { text-align: right; font-variant-numeric: tabular-nums; }
.bm-report td.bad { color: #b00020; font-weight: bold; }
.bm-report thead th { border-bottom: 2px solid #999; background: #f6f6f6; }
.bm-report .settings td:first-child { color: #555; padding-right: 1.5em; }
.bm-report .sig { font-family: monospace; font-size: 0.85em; background: #f4f4f4;
  padding: 3px 6px; word-break: break-all; }
.bm-report .status { font-size: 0.75em; padding: 1px 6px; border-radius: 3px;
  vertical-align: middle; margin-left: 0.5em; font-weight: normal; }
.bm-report .st-ok { background: #e3f2e1; color: #225522; }
.bm-report .st-skipped { background: #eee; color: #555; }
.bm-report .st-partial { background: #fff4d6; color: #6b4a00; }
.bm-report .partial-reasons { background: #fff8e6; border-left: 4px solid #e0b000;
  padding: 0.4em 0.8em; margin: 0.6em 0; font-size: 0.9em; }
.bm-report .answer { border: 2px solid #1f5fa8; padding: 0 1em 0.8em; margin-top: 1em; }
.bm-report .answer h2 { margin-top: 0.6em; }
.bm-report .csv { font-size: 0.8em; margin: 0.1em 0; }
.bm-report details.full-table > summary { font-size: 0.85em; color: #1f5fa8;
  cursor: pointer; }
.bm-report .st-failed { background: #fde2e2; color: #b00020; }
.bm-report .time { color: #777; font-size: 0.8em; font-weight: normal; }
.bm-report .reading { background: #f3f7fc; border-left: 4px solid #1f5fa8;
  padding: 0.4em 0.8em; margin: 0.6em 0; }
.bm-report .reading p { margin: 0.15em 0; }
.bm-report .preview { background: #fff4d6; border: 1px solid #e0b000; padding: 2px 6px;
  font-size: 0.8em; display: inline-block; margin: 0.2em 0; }
.bm-report .alert { background: #fde2e2; border: 1px solid #b00020; padding: 0.5em 1em; }
.bm-report .okbox { background: #e3f2e1; border: 1px solid #5a9a55; padding: 0.5em 1em; }
.bm-report .notes { color: #555; font-size: 0.8em; margin: 0.2em 0 0.8em; padding-left: 1.2em; }
.bm-report .error { font-family: monospace; color: #b00020; white-space: pre-wrap; }
.bm-report img.plot { max-width: 100%; height: auto; border: 1px solid #eee; margin: 0.4em 0; }
.bm-report .method { font-size: 0.85em; color: #444; }
.bm-report code { background: #f4f4f4; padding: 0 3px; }
.bm-report svg.bar { display: block; }
.bm-report nav ol { columns: 2; font-size: 0.9em; }
@media print {
  .bm-report { max-width: none; font-size: 10pt; }
  .bm-report section { page-break-inside: avoid; break-inside: avoid-page; }
  .bm-report img.plot { max-height: 12cm; page-break-inside: avoid; }
  .bm-report nav { display: none; }
  .bm-report a { color: inherit; text-decoration: none; }
  .bm-report thead { display: table-header-group; }
  .bm-report tr { page-break-inside: avoid; }
}
"""

#: The page skeleton before a page's body (``standalone=False``: a fragment for Jupyter).
PAGE_OPEN = """{% if standalone %}<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ title }}: {{ source }}</title>
<style>{{ css | safe }}</style>
</head>
<body>
{% else %}<style>{{ css | safe }}</style>
{% endif %}
<div class="bm-report">
"""

#: The page skeleton after a page's body.
PAGE_CLOSE = """</div>
{% if standalone %}</body>
</html>
{% endif %}"""

#: One result table: the rows at the top, the full table collapsed below when they are not
#: all of it, and a CSV download of every row.
TABLE = """
{% macro table_rows(t, rows) %}<table class="result"><thead><tr>
{% for n in t.index_names %}<th>{{ n }}</th>{% endfor %}
{% for c in t.columns %}<th>{{ c }}</th>{% endfor %}
{% if t.has_bar %}<th>interval</th>{% endif %}
</tr></thead><tbody>
{% for r in rows %}<tr>{% for v in r.labels %}<td>{{ v }}</td>{% endfor %}
{% for c in r.cells %}<td class="{{ 'num' if c.num }}{{ ' bad' if c.bad }}">{{ c.text }}</td>
{% endfor %}
{% if t.has_bar %}<td>{{ r.bar }}</td>{% endif %}</tr>
{% endfor %}</tbody></table>{% endmacro %}
{% macro result_table(t) %}<div class="table-block" data-rows="{{ t.n_rows }}"
 data-shown="{{ t.rows | length }}" data-full="{{ t.full_rows | length }}">
{% if t.rows %}{{ table_rows(t, t.rows) }}{% endif %}
{% if t.full_rows %}<details class="full-table"><summary>{{ 'the table' if t.collapsed
 else 'the full table' }}: all {{ t.n_rows }} rows</summary>
{{ table_rows(t, t.full_rows) }}</details>{% endif %}
<p class="csv"><a download="{{ t.csv_name }}" href="{{ t.csv }}">download this table as CSV
({{ t.n_rows }} rows)</a></p>
{% if t.notes or t.signature %}<ul class="notes">{% for n in t.notes %}<li>{{ n }}</li>
{% endfor %}{% if t.signature %}<li>signature: <span class="sig">{{ t.signature }}</span></li>
{% endif %}</ul>{% endif %}
</div>{% endmacro %}
"""

TEMPLATE = PAGE_OPEN + TABLE + """<header>
<h1>{{ title }}</h1>
<p class="sub">{{ source }} &middot; {{ sizes }}</p>
{% if fast %}<p class="preview">--bayes fast: every Bayesian table below is a PREVIEW
with capped draws; rerun with --bayes full before reporting any number.</p>{% endif %}
</header>
<section id="answer" class="answer">
<h2>The answer</h2>
{% if convergence %}
<div class="alert" id="convergence-problems"><strong>Convergence problems in
{{ conv_groups | length }} table(s)</strong> (rows with r_hat &gt; 1.01 or ess_bulk &lt; 400,
fits with divergent transitions): do not report these numbers before fixing them
(more draws, --bayes full, a higher target_accept).
<table><thead><tr><th>section</th><th>table</th><th>rows flagged</th><th>worst r_hat</th>
<th>lowest ess_bulk</th><th>divergences</th><th>rows</th></tr></thead><tbody>
{% for g in conv_groups %}<tr><td>{{ g.section }}</td><td>{{ g.table }}</td>
<td class="num">{{ g.n_rows }}</td><td class="num">{{ g.worst_r_hat }}</td>
<td class="num">{{ g.min_ess }}</td><td class="num">{{ g.divergences }}</td>
<td>{{ g.examples }}</td></tr>
{% endfor %}</tbody></table>
<details><summary>all {{ convergence | length }} flagged rows</summary>
<table><thead><tr><th>section</th><th>table</th><th>row</th><th>problem</th></tr></thead>
<tbody>
{% for c in convergence[:300] %}<tr><td>{{ c.section }}</td><td>{{ c.table }}</td>
<td>{{ c.row }}</td><td>{{ c.problem }}</td></tr>
{% endfor %}</tbody></table>
{% if convergence | length > 300 %}<p>... and {{ convergence | length - 300 }} more.</p>
{% endif %}</details>
</div>
{% endif %}
{% if answer.reduced %}<p class="preview" id="budget-reduced">To stay within the time
budget: {{ answer.reduced | join("; ") }}.</p>{% endif %}
<h3 id="answer-metrics">Which metrics to trust, and how much</h3>
{% for b in answer.best %}<div class="headline" data-trait="{{ b.trait }}">
<p class="reading">{{ b.text }}</p>
{% if b.table %}{{ result_table(b.table) }}{% endif %}</div>
{% else %}<p>No metric was compared with a human score (see the sections below for
why).</p>
{% endfor %}
<h3 id="answer-raters">Raters and judges</h3>
<ul>{% for r in answer.raters %}<li>{{ r }}</li>
{% else %}<li>No rater or judge was checked: the data has no ratings by rater, or the
sections that check them did not run.</li>
{% endfor %}</ul>
<h3 id="answer-limits">What the data could not support</h3>
<ul>{% for r in answer.limits %}<li>{{ r }}</li>
{% else %}<li>Every section computed every estimate.</li>
{% endfor %}</ul>
<h3 id="answer-quality">Data quality</h3>
<ul>{% for r in answer.quality %}<li>{{ r }}</li>
{% else %}<li>No data-quality finding.</li>
{% endfor %}</ul>
</section>
<nav><p class="sub">{{ counts.ok }} sections computed, {{ counts.partial }} partial,
{{ counts.skipped }} skipped, {{ counts.failed }} failed.</p><ol>
{% for s in sections %}<li><a href="#sec-{{ s.key }}">{{ s.title }}</a>
<span class="status st-{{ s.status }}">{{ s.status }}</span></li>
{% endfor %}</ol></nav>
{% for s in sections %}
<section id="sec-{{ s.key }}" class="section status-{{ s.status }}" data-status="{{ s.status }}">
<h2>{{ s.title }} <span class="status st-{{ s.status }}">{{ s.status }}</span>
<span class="time">{{ s.seconds }} s</span></h2>
{% if s.status == "skipped" %}
<p class="skip-reason">Skipped: {{ s.reason }}</p>
{% elif s.status == "failed" %}
<p>This section failed; the rest of the report is unaffected.</p>
<p class="error">{{ s.error }}</p>
{% else %}
{% if s.partial %}<div class="partial-reasons"><strong>Partial:</strong> some estimates
could not be computed.<ul>{% for r in s.partial %}<li>{{ r }}</li>{% endfor %}</ul></div>
{% endif %}
{% if s.reading %}<div class="reading">{% for line in s.reading %}<p>{{ line }}</p>
{% endfor %}</div>{% endif %}
{% for t in s.tables %}
<h3>{{ t.caption }}</h3>
{% if t.preview %}<p class="preview">--bayes fast preview: few draws; do not report.</p>
{% endif %}
{{ result_table(t) }}
{% endfor %}
{% for img in s.images %}<img class="plot" alt="{{ s.title }}: plot {{ loop.index }}"
 data-labels="{{ img.n_labels }}" data-font-px="{{ img.font_px }}"
 data-label-px="{{ img.label_px }}" data-width-px="{{ img.width_px }}" src="{{ img.src }}">
{% endfor %}
{% for n in s.notes %}<p class="notes">{{ n }}</p>
{% endfor %}
{% if s.methods %}<div class="method">Method:
{% for name, doc in s.methods %}<details><summary><code>{{ name }}</code></summary>
<p>{{ doc }}</p></details>{% endfor %}</div>{% endif %}
{% endif %}
{% if s.warnings %}<details class="warnings"><summary>{{ s.warnings | length }}
warning(s)</summary><ul class="notes">{% for w in s.warnings %}<li>{{ w }}</li>{% endfor %}
</ul></details>{% endif %}
</section>
{% endfor %}
<section id="provenance">
<h2>Settings and provenance</h2>
{% if not convergence %}
<p class="okbox" id="convergence-ok">No convergence problems: every MCMC table meets
r_hat &le; 1.01 and ess_bulk &ge; 400 with no divergent transitions (or no MCMC was run).</p>
{% endif %}
<table class="settings"><tbody>
{% for k, v in settings %}<tr><td>{{ k }}</td><td>{{ v }}</td></tr>
{% endfor %}</tbody></table>
<p>Signature: <span class="sig">{{ signature }}</span></p>
</section>
<footer><p class="sub">Made by bayesmeta {{ settings[0][1] }}. Reproduce with the signature
above: same data hash, seed and settings.</p></footer>
""" + PAGE_CLOSE

#: Extra styles of a rendered vignette (code, its printed output, warnings, tracebacks).
VIGNETTE_CSS = """
.bm-report .md { margin: 0.6em 0; }
.bm-report pre { font-size: 0.82em; overflow-x: auto; margin: 0.3em 0; }
.bm-report pre.code { background: #f6f8fa; border-left: 3px solid #1f5fa8;
  padding: 0.5em 0.8em; }
.bm-report pre.out { padding: 0.2em 0.8em; border-left: 3px solid #ddd; }
.bm-report pre.stderr { background: #fff8e6; border-left-color: #e0b000; color: #6b4a00; }
.bm-report pre.traceback { background: #fde2e2; border-left: 3px solid #b00020;
  padding: 0.5em 0.8em; }
.bm-report pre.raw { color: #555; }
.bm-report .cell { margin: 0.8em 0; }
.bm-report .cell .time { text-align: right; margin: 0; }
@media print {
  .bm-report pre { white-space: pre-wrap; overflow-wrap: anywhere; overflow: visible; }
  .bm-report pre.code { background: none; }
}
"""

#: The body of a rendered vignette (:func:`bayesmeta.report.vignette.render_vignette`).
VIGNETTE_TEMPLATE = PAGE_OPEN + """<header>
{% if show_title %}<h1>{{ title }}</h1>
{% endif %}
<p class="sub">Vignette {{ source }} &middot; {{ n_code }} code cells &middot;
{{ seconds }} s &middot; bayesmeta {{ version }} &middot; Python {{ python }} &middot;
rendered {{ created }}</p>
{% if failed %}
<div class="alert" id="vignette-failed"><strong>Cell {{ failed.number }} (line
{{ failed.line }}) failed:</strong> {{ failed.summary }}. Rendering stopped there;
{{ failed.not_run }} later cell(s) were not run. The traceback is under
<a href="#cell-{{ failed.number }}">the cell</a>.</div>
{% else %}
<p class="okbox" id="vignette-ok">Every cell ran, in order, to the end.</p>
{% endif %}
</header>
<main>
{% for c in cells %}
{% if c.kind == "markdown" %}
<div class="md" id="cell-{{ c.number }}">{{ c.html }}</div>
{% elif c.kind == "raw" %}
<pre class="raw" id="cell-{{ c.number }}">{{ c.source }}</pre>
{% else %}
<div class="cell {{ c.status }}" id="cell-{{ c.number }}" data-status="{{ c.status }}">
<pre class="code">{{ c.source }}</pre>
{% for o in c.outputs %}
{% if o.kind == "figure" %}
<img class="plot" alt="cell {{ c.number }}, figure {{ o.index }}" src="{{ o.data }}">
{% else %}
<pre class="out {{ o.kind }}">{{ o.text }}</pre>
{% endif %}
{% endfor %}
{% if c.status == "failed" %}
<pre class="error traceback">{{ c.error }}</pre>
{% endif %}
<p class="time">cell {{ c.number }}, line {{ c.line }}: {{ c.seconds }} s</p>
</div>
{% endif %}
{% endfor %}
</main>
<footer><p class="sub">Rendered by bayesmeta {{ version }} from {{ source }}
(<code>bayesmeta vignette {{ source }}</code>).</p></footer>
""" + PAGE_CLOSE
