/**
 * The report's and the viewer's style and browser scripts. The scripts build every element
 * with `textContent` and attributes: nothing they show is ever parsed as HTML.
 */

export const REPORT_STYLE = `
:root{--r-bg:#fdfdfc;--r-text:#1f2328;--r-muted:#5d6470;--r-border:#dfe1e4;--r-head:#f3f4f6;--r-stripe:#f9fafb;--r-accent:#2f54d6;--r-up:#1a7f37;--r-up-soft:#dcf3e3;--r-down:#c0362c;--r-down-soft:#fbe3e0;--r-differs:#fff7db;--r-warn:#9a5b00;--r-code:#f0f1f3;color-scheme:light dark}
@media (prefers-color-scheme:dark){:root{--r-bg:#16181c;--r-text:#e4e6ea;--r-muted:#9aa1ad;--r-border:#33373e;--r-head:#1f2227;--r-stripe:#1b1e22;--r-accent:#8aa4ff;--r-up:#6fd39a;--r-up-soft:#1d3a2a;--r-down:#ff8a80;--r-down-soft:#47221f;--r-differs:#3a3320;--r-warn:#f0b95a;--r-code:#262a31}}
body{font:15px/1.55 ui-sans-serif,system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;margin:0 auto;padding:1.5rem 2rem 4rem;max-width:1600px;color:var(--r-text);background:var(--r-bg)}
h1{font-size:1.6rem;font-weight:650;letter-spacing:-.01em;margin:.2em 0;overflow-wrap:anywhere}
h2{font-size:1.2rem;font-weight:650;margin:2.2em 0 .6em;padding-bottom:.3em;border-bottom:1px solid var(--r-border)}
h3{font-size:1rem;font-weight:600;margin:1.4em 0 .4em}h4{font-size:.95rem;margin:.2em 0 .4em}
a{color:var(--r-accent)}code{font:.85em/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.meta,.hint{color:var(--r-muted);font-size:.9em}
table.grid{border-collapse:collapse;margin:.6em 0;font-size:.92rem}
.table-box,.chart-box{max-width:100%;overflow-x:auto}
table.grid th,table.grid td{border:1px solid var(--r-border);padding:4px 8px;vertical-align:top}
table.grid th{background:var(--r-head);text-align:left;font-weight:600}
table.grid tbody tr:nth-child(even){background:var(--r-stripe)}
table.questions th{cursor:pointer;position:sticky;top:0;z-index:1;user-select:none}
table.questions th[aria-sort=ascending]::after{content:" ▲";font-size:.75em}table.questions th[aria-sort=descending]::after{content:" ▼";font-size:.75em}
table.questions td.text{max-width:28em}
tr.differs td{background:var(--r-differs)}
td.changed{box-shadow:inset 3px 0 0 var(--r-accent)}
td.score.up,.up{color:var(--r-up)}td.score.down,.down{color:var(--r-down)}
td.score.up{background:var(--r-up-soft)}td.score.down{background:var(--r-down-soft)}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.text{white-space:pre-wrap;overflow-wrap:break-word}
code.qid,td.qid code,td.nowrap{white-space:nowrap}
.figures{display:flex;flex-wrap:wrap;gap:.2em .9em}.figure-chip{white-space:nowrap}
.swatch,.key i{display:inline-block;width:10px;height:10px;margin-right:6px;border-radius:2px}
.key{margin-right:1.2em;font-size:.9em}
.forced,.neutralised{color:var(--r-warn);font-size:.88em;margin-top:.2em}.error{color:var(--r-down)}
.frames{display:flex;flex-wrap:wrap;gap:3px;margin-top:4px}.frames a{display:block;line-height:0}
.frames .fthumb{display:block;width:80px;background-color:var(--r-code);background-position:center;background-size:cover;background-repeat:no-repeat;border-radius:2px}
.recordings{display:flex;flex-wrap:wrap;gap:.4em 1.2em}figure.recording{max-width:100%;overflow-x:auto}
.answer-plan .plan{display:block;width:160px;max-width:100%;background-color:var(--r-code);background-size:contain;background-repeat:no-repeat;border-radius:2px}.answer-plan .plan-link{display:block;line-height:0;margin-top:4px}
.recording .plan{display:block;width:240px;max-width:100%;background-color:var(--r-code);background-size:contain;background-repeat:no-repeat;border-radius:2px}.recording .plan-link{display:block;line-height:0}
pre{margin:0;font-size:.85em;max-width:48em;overflow:auto}
details>summary{cursor:pointer;color:var(--r-muted);font-size:.9em}
.filters{display:flex;flex-wrap:wrap;gap:.6em 1.2em;align-items:center;margin:.6em 0}
.filters input,.filters select,.filters button{font:inherit;font-size:.9em;padding:3px 6px;color:var(--r-text);background:var(--r-bg);border:1px solid var(--r-border);border-radius:4px}
.filters button{cursor:pointer}
img.figure{max-width:100%;display:block;margin:.5em 0}
svg.chart{display:block;overflow:visible}svg.chart text{fill:var(--r-text)}svg.chart line.tick{stroke:var(--r-border)}svg.chart line.tick.zero{stroke:var(--r-muted)}svg.chart g.bar line{stroke:var(--r-text)}
figure{margin:.6em 0}figcaption{margin-top:.2em}
details.run-info{border:1px solid var(--r-border);border-radius:6px;padding:.5em .8em;margin:.6em 0}
details.run-info>summary{color:var(--r-text);font-size:1rem;overflow-wrap:anywhere}
.stages{display:flex;flex-wrap:wrap;gap:1em 2.5em;margin:.5em 0}.stage{min-width:min(22em,100%);max-width:44em}
dl.info{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.15em 1em;margin:0 0 .4em;font-size:.9rem}dl.info dt{color:var(--r-muted)}dl.info dd{margin:0;min-width:0;overflow-wrap:anywhere}
dl.info dd.counts{display:flex;flex-wrap:wrap;gap:0 .8em}dl.info .count{white-space:nowrap}ul.reasons{margin:0;padding-left:1.1em}
pre.config{max-height:24em;background:var(--r-code);padding:.5em;border-radius:4px}
table.comparison tr.significant td{font-weight:600}td.mark{text-align:center;color:var(--r-accent);font-weight:700}
ol.structured{margin:0;padding-left:1.3em}ol.structured ul.objects{margin:0;padding-left:1.1em;font-size:.9em}
.structured .predicate{color:var(--r-muted)}.structured .position{color:var(--r-muted);font-variant-numeric:tabular-nums}
ol.choices{margin:.2em 0 0;padding-left:1.4em;font-size:.9em}
.truth-text{margin-bottom:.2em}.invalid{color:var(--r-warn)}
@media (max-width:900px){body{padding:1rem}table.questions td.text{max-width:16em}}
`;

export const REPORT_SCRIPT = `(function(){
"use strict";
function cellValue(cell){if(!cell)return "";var v=cell.getAttribute("data-csv");if(v===null)v=cell.getAttribute("data-sort");if(v===null)v=cell.textContent||"";return v.trim();}
function csvField(v){return /[",\\n\\r]/.test(v)?'"'+v.replace(/"/g,'""')+'"':v;}
function setup(tableId,p){
var table=document.getElementById(tableId);
if(!table)return;
var body=table.tBodies[0];
var rows=Array.prototype.slice.call(body.rows);
function $(name){return document.getElementById(p+"-"+name);}
var search=$("search"),category=$("category"),run=$("run"),score=$("score"),differ=$("differ"),count=$("count"),csv=$("csv");
function pointsOf(row,r){var cell=row.querySelector('td.score[data-run="'+r+'"]');if(!cell)return null;var v=cell.getAttribute("data-points");return v===""||v===null?null:Number(v);}
function apply(){
  var text=(search.value||"").toLowerCase(),cat=category.value,r=run.value,s=score.value,shown=0;
  rows.forEach(function(row){
    var ok=true;
    if(cat&&row.getAttribute("data-category")!==cat)ok=false;
    if(ok&&text&&row.textContent.toLowerCase().indexOf(text)<0)ok=false;
    if(ok&&s){var v=pointsOf(row,r);if(s==="failed")ok=v===null;else if(v===null)ok=false;else ok=s==="low"?v<50:v>=50;}
    if(ok&&differ&&differ.checked)ok=row.classList.contains("differs");
    row.hidden=!ok;if(ok)shown++;
  });
  count.textContent=shown+" of "+rows.length+" questions";
}
[search,category,run,score,differ].forEach(function(el){if(el){el.addEventListener("input",apply);el.addEventListener("change",apply);}});
var direction={};
function sortBy(th){
  var col=Number(th.getAttribute("data-col"));direction[col]=-(direction[col]||-1);var dir=direction[col];
  rows.sort(function(a,b){var x=a.cells[col]?a.cells[col].getAttribute("data-sort"):"",y=b.cells[col]?b.cells[col].getAttribute("data-sort"):"";
    var nx=Number(x),ny=Number(y);if(x!==""&&y!==""&&x!==null&&y!==null&&!isNaN(nx)&&!isNaN(ny))return dir*(nx-ny);return dir*String(x).localeCompare(String(y));});
  rows.forEach(function(row){body.appendChild(row);});
  table.tHead.querySelectorAll("th").forEach(function(h){h.removeAttribute("aria-sort");});
  th.setAttribute("aria-sort",dir>0?"ascending":"descending");
}
table.tHead.querySelectorAll("th").forEach(function(th){
  th.addEventListener("click",function(){sortBy(th);});
  th.addEventListener("keydown",function(e){if(e.key==="Enter"||e.key===" "){e.preventDefault();sortBy(th);}});
});
if(csv)csv.addEventListener("click",function(){
  var head=Array.prototype.map.call(table.tHead.rows[0].cells,function(c){return csvField((c.textContent||"").trim());}).join(",");
  var lines=[head];
  rows.forEach(function(row){if(!row.hidden)lines.push(Array.prototype.map.call(row.cells,function(c){return csvField(cellValue(c));}).join(","));});
  var link=document.createElement("a");
  link.href=URL.createObjectURL(new Blob([lines.join("\\r\\n")+"\\r\\n"],{type:"text/csv;charset=utf-8"}));
  link.download=tableId+".csv";
  document.body.appendChild(link);link.click();link.remove();
  setTimeout(function(){URL.revokeObjectURL(link.href);},1000);
});
apply();
}
setup("question-table","q");
setup("tag-table","t");
})();`;
