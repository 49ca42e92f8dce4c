/**
 * The report's and the viewer's style and browser scripts. The scripts build every element
 * with `textContent` and attributes: nothing they show is ever parsed as HTML.
 */

export const REPORT_STYLE = `
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ddd}
.meta,.hint{color:#666;font-size:.9em}
table.grid{border-collapse:collapse;margin:.5em 0}
table.grid th,table.grid td{border:1px solid #ddd;padding:3px 6px;vertical-align:top}
table.grid th{background:#f4f4f4;text-align:left}
table.questions th{cursor:pointer;position:sticky;top:0}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.text{white-space:pre-wrap;word-break:break-word}
.swatch,.key i{display:inline-block;width:10px;height:10px;margin-right:4px}
.key{margin-right:1em}
.forced{color:#a0522d;font-size:.9em}.error{color:#b00}
.frames{display:flex;flex-wrap:wrap;gap:2px;margin-top:3px}.frames img{display:block}
pre{margin:0;font-size:.85em;max-width:40em}
.filters{display:flex;flex-wrap:wrap;gap:1em;align-items:center;margin:.5em 0}
img.figure{max-width:100%;display:block;margin:.5em 0}
ol.structured{margin:0;padding-left:1.3em}ol.structured ul.objects{margin:0;padding-left:1.1em;font-size:.9em}
.structured .predicate{color:#555}.structured .position{color:#666;font-variant-numeric:tabular-nums}
.truth-text{margin-bottom:.2em}.invalid{color:#a0522d}
`;

export const REPORT_SCRIPT = `(function(){
"use strict";
function setup(tableId,p){
var table=document.getElementById(tableId);
if(!table)return;
var body=table.tBodies[0];
var rows=Array.prototype.slice.call(body.rows);
function $(name){return document.getElementById(p+"-"+name);}
var search=$("search"),category=$("category"),run=$("run"),score=$("score"),differ=$("differ"),count=$("count");
function pointsOf(row,r){var cell=row.querySelector('td.score[data-run="'+r+'"]');if(!cell)return null;var v=cell.getAttribute("data-points");return v===""?null:Number(v);}
function apply(){
  var text=(search.value||"").toLowerCase(),cat=category.value,r=run.value,s=score.value,shown=0;
  rows.forEach(function(row){
    var ok=true;
    if(cat&&row.getAttribute("data-category")!==cat)ok=false;
    if(ok&&text&&row.textContent.toLowerCase().indexOf(text)<0)ok=false;
    if(ok&&s){var v=pointsOf(row,r);if(s==="failed")ok=v===null;else if(v===null)ok=false;else ok=s==="low"?v<50:v>=50;}
    if(ok&&differ&&differ.checked){var seen={},n=0;row.querySelectorAll("td.score").forEach(function(c){var v=c.getAttribute("data-points");if(!(v in seen)){seen[v]=1;n++;}});ok=n>1;}
    row.hidden=!ok;if(ok)shown++;
  });
  count.textContent=shown+" of "+rows.length+" questions";
}
[search,category,run,score,differ].forEach(function(el){if(el){el.addEventListener("input",apply);el.addEventListener("change",apply);}});
var direction={};
table.tHead.querySelectorAll("th").forEach(function(th){th.addEventListener("click",function(){
  var col=Number(th.getAttribute("data-col"));direction[col]=-(direction[col]||-1);var dir=direction[col];
  rows.sort(function(a,b){var x=a.cells[col]?a.cells[col].getAttribute("data-sort"):"",y=b.cells[col]?b.cells[col].getAttribute("data-sort"):"";
    var nx=Number(x),ny=Number(y);if(x!==""&&y!==""&&!isNaN(nx)&&!isNaN(ny))return dir*(nx-ny);return dir*String(x).localeCompare(String(y));});
  rows.forEach(function(row){body.appendChild(row);});
  table.tHead.querySelectorAll("th").forEach(function(h){h.removeAttribute("aria-sort");});
  th.setAttribute("aria-sort",dir>0?"ascending":"descending");
});});
apply();
}
setup("question-table","q");
setup("tag-table","t");
})();`;
