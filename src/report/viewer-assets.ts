/**
 * The live viewer's page, style and browser script. The script builds every element with
 * `textContent` and attributes: nothing it shows is ever parsed as HTML. It asks only the
 * viewer's own origin (the page's Content-Security-Policy allows nothing else).
 */
import { REPORT_STYLE } from "./assets.js";

/** Colours of the light and the dark look (the dark one follows the system, or the toggle). */
const LIGHT = "--v-bg:#f6f6f3;--v-surface:#fff;--v-raised:#fbfbf9;--v-text:#1c1e22;--v-muted:#5f6673;--v-border:#e1e2dd;--v-strong-border:#c9cbc4;--v-accent:#2f54d6;--v-accent-text:#fff;--v-accent-soft:#e7ecfc;--v-good:#146c3f;--v-good-soft:#ddf2e5;--v-bad:#b3261e;--v-bad-soft:#fbe4e1;--v-warn:#8a5300;--v-warn-soft:#fdf0d9;--v-code:#f0f0ec;--v-shadow:0 1px 2px rgba(20,24,32,.05),0 2px 8px rgba(20,24,32,.06);color-scheme:light";
const DARK = "--v-bg:#15171b;--v-surface:#1d2025;--v-raised:#23262c;--v-text:#e6e7ea;--v-muted:#9aa1ad;--v-border:#30343b;--v-strong-border:#454a53;--v-accent:#8aa4ff;--v-accent-text:#0f1320;--v-accent-soft:#26304f;--v-good:#6fd39a;--v-good-soft:#1d3a2a;--v-bad:#ff8a80;--v-bad-soft:#47221f;--v-warn:#f0b95a;--v-warn-soft:#3e3018;--v-code:#262a31;--v-shadow:0 1px 2px rgba(0,0,0,.3),0 2px 8px rgba(0,0,0,.25);color-scheme:dark";

export const VIEWER_STYLE = `${REPORT_STYLE}
:root{${LIGHT}}
@media (prefers-color-scheme:dark){:root:not([data-theme=light]){${DARK}}}
:root[data-theme=dark]{${DARK}}
body.viewer{margin:0;padding:0;max-width:none;background:var(--v-bg);color:var(--v-text);font:15px/1.55 ui-sans-serif,system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;-webkit-font-smoothing:antialiased}
.viewer a{color:var(--v-accent);text-decoration:none}.viewer a:hover{text-decoration:underline}
.viewer code,.viewer pre,.viewer .mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.86em}
.viewer h1,.viewer h2,.viewer h3{border:0;margin:0;line-height:1.25}
.viewer h2{font-size:1.35rem;font-weight:650;letter-spacing:-.01em}
.viewer h3{font-size:.8rem;text-transform:uppercase;letter-spacing:.06em;color:var(--v-muted);font-weight:650;margin:0 0 .6rem}
.topbar{position:sticky;top:0;z-index:20;display:flex;flex-wrap:wrap;align-items:center;gap:.4rem 1.25rem;padding:.6rem 1.5rem;background:var(--v-surface);border-bottom:1px solid var(--v-border)}
.brand{font-weight:700;font-size:1rem;letter-spacing:-.01em;color:var(--v-text)}.brand span{color:var(--v-accent)}
.topbar nav{display:flex;gap:.25rem}.topbar nav a{padding:.3rem .7rem;border-radius:6px;color:var(--v-muted);font-weight:550}
.topbar nav a:hover{background:var(--v-raised);text-decoration:none;color:var(--v-text)}.topbar nav a.active{background:var(--v-accent-soft);color:var(--v-accent)}
.topbar .spacer{flex:1}
.live{font-size:.82rem;color:var(--v-muted);display:flex;align-items:center;gap:.4rem;white-space:nowrap}
.live i{width:8px;height:8px;border-radius:50%;background:var(--v-good);display:inline-block}.live.offline i{background:var(--v-bad)}
.viewer button,.viewer select,.viewer input,.viewer textarea{font:inherit;color:var(--v-text);background:var(--v-surface);border:1px solid var(--v-strong-border);border-radius:6px;padding:.32rem .6rem}
.viewer button{cursor:pointer;font-weight:550}.viewer button:hover{background:var(--v-raised)}
.viewer button.primary{background:var(--v-accent);color:var(--v-accent-text);border-color:var(--v-accent)}
.viewer :focus-visible{outline:2px solid var(--v-accent);outline-offset:1px}
main.page{max-width:1320px;margin:0 auto;padding:1.4rem 1.5rem 4rem}
.pagehead{display:flex;align-items:baseline;gap:1rem;flex-wrap:wrap;margin-bottom:1rem}.pagehead .meta{color:var(--v-muted);font-size:.9rem}
.card{background:var(--v-surface);border:1px solid var(--v-border);border-radius:10px;box-shadow:var(--v-shadow);padding:1rem 1.1rem;margin-bottom:1rem}
.card.flush{padding:0;overflow:auto}
.notes{color:var(--v-muted);font-size:.88rem;margin:.2rem 0 1rem;padding-left:1.1rem}
.viewer .filters{display:flex;flex-wrap:wrap;gap:.6rem;align-items:center;margin:0 0 .8rem}
.viewer .filters .count{color:var(--v-muted);font-size:.88rem;margin-left:auto}
.viewer .filters label{display:flex;gap:.35rem;align-items:center;font-size:.9rem;color:var(--v-muted)}
.viewer table.grid{border-collapse:separate;border-spacing:0;width:100%;margin:0;font-size:.92rem}
.viewer table.grid th,.viewer table.grid td{border:0;border-bottom:1px solid var(--v-border);padding:.5rem .7rem;vertical-align:top;text-align:left}
.viewer table.grid th{position:sticky;top:0;background:var(--v-raised);color:var(--v-muted);font-size:.8rem;letter-spacing:.02em;font-weight:650;white-space:nowrap;z-index:1}
.viewer table.grid th.sortable{cursor:pointer;user-select:none}.viewer table.grid th.sortable:hover{color:var(--v-text)}
.viewer table.grid th[aria-sort=ascending]::after{content:" ▲";font-size:.8em}.viewer table.grid th[aria-sort=descending]::after{content:" ▼";font-size:.8em}
.viewer table.grid tbody tr:hover{background:var(--v-raised)}
.viewer table.grid tbody tr.selected{background:var(--v-accent-soft);box-shadow:inset 3px 0 0 var(--v-accent)}
.viewer table.grid td.num,.viewer table.grid th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.viewer .question-list tbody tr{cursor:pointer}
.viewer button.more{display:block;width:100%;border:0;border-top:1px solid var(--v-border);border-radius:0;padding:.6rem;color:var(--v-accent);background:var(--v-raised)}
.viewer button.more[hidden]{display:none}
.viewer table.question-list{table-layout:auto}
.viewer .question-list .w-id{width:9.5rem}.viewer .question-list .w-cat{width:10rem}.viewer .question-list .w-ans{width:24%}.viewer .question-list .w-mark{width:4.4rem}.viewer .question-list .w-rated{width:4.6rem}.viewer .question-list .w-stop{width:7rem}.viewer .question-list .w-path{width:5rem}
@media (max-width:980px){.viewer .question-list .w-id{width:5.5rem}.viewer .question-list .w-cat{width:6.5rem}.viewer .question-list .w-mark{width:3.2rem}.viewer .question-list .w-rated{width:3.6rem}}
.viewer .question-list td.qtext{min-width:12rem;max-width:34rem}.viewer .question-list td.answer{min-width:8rem;max-width:26rem}.viewer .question-list td.gt{min-width:6rem;max-width:18rem}
.viewer .text{white-space:pre-wrap;overflow-wrap:break-word}
.viewer code.qid{white-space:nowrap}
@media (max-width:980px){.viewer table.grid th,.viewer table.grid td{padding:.45rem .5rem}}
.viewer .figures{display:flex;flex-wrap:wrap;gap:.3rem .6rem;margin:0 0 1rem}.viewer .figure-chip{white-space:nowrap}
main.page{box-sizing:border-box;max-width:min(1320px,100%)}
@media (max-width:600px){main.page{padding:1rem .6rem 3rem}.topbar{padding:.5rem .6rem}}
.pill{display:inline-block;padding:.05rem .5rem;border-radius:999px;font-size:.78rem;font-weight:600;background:var(--v-code);color:var(--v-muted);white-space:nowrap}
.pill.good{background:var(--v-good-soft);color:var(--v-good)}.pill.bad{background:var(--v-bad-soft);color:var(--v-bad)}.pill.warn{background:var(--v-warn-soft);color:var(--v-warn)}.pill.accent{background:var(--v-accent-soft);color:var(--v-accent)}
.mark{display:inline-block;min-width:1.8em;text-align:center;padding:.05rem .35rem;border-radius:5px;font-weight:650;font-variant-numeric:tabular-nums}
.mark.s5,.mark.s4{background:var(--v-good-soft);color:var(--v-good)}.mark.s3{background:var(--v-warn-soft);color:var(--v-warn)}.mark.s2,.mark.s1,.mark.s0{background:var(--v-bad-soft);color:var(--v-bad)}.mark.none{color:var(--v-muted)}
.qnav{display:flex;align-items:center;gap:.5rem;margin-bottom:.8rem;flex-wrap:wrap}.qnav .pos{color:var(--v-muted);font-size:.88rem}.qnav .grow{flex:1}
.kbd{font:600 .75rem ui-monospace,monospace;border:1px solid var(--v-strong-border);border-bottom-width:2px;border-radius:4px;padding:0 .3rem;color:var(--v-muted)}
.question-layout{display:grid;grid-template-columns:minmax(0,1fr) 340px;grid-template-areas:"facts side" "rest side";grid-template-rows:auto 1fr;column-gap:1rem;align-items:start}
.question-layout>.facts{grid-area:facts}.question-layout>.rest{grid-area:rest}.question-layout>aside{grid-area:side}
@media (max-width:980px){.question-layout{grid-template-columns:minmax(0,1fr);grid-template-areas:"facts" "side" "rest";grid-template-rows:auto}}
.viewer dl.facts{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.45rem 1rem;margin:0}
.viewer dl.facts dt{color:var(--v-muted);font-size:.86rem}.viewer dl.facts dd{margin:0}
.viewer dd.answer{font-weight:600}
.viewer #question-text{margin-bottom:.9rem;font-size:1.3rem}
.thumbs{display:flex;flex-wrap:wrap;gap:.45rem}
.thumb{display:flex;flex-direction:column;align-items:center;gap:.15rem;padding:0;border:1px solid var(--v-border);border-radius:6px;background:var(--v-raised);overflow:hidden;cursor:zoom-in}
.thumb img{display:block;width:120px;height:auto;min-height:40px;object-fit:cover}.thumb span{font-size:.72rem;color:var(--v-muted);padding:0 .3rem .2rem}
.calls{list-style:none;margin:0;padding:0;counter-reset:call}
.call{border:1px solid var(--v-border);border-radius:8px;margin-bottom:.8rem;background:var(--v-surface);overflow:hidden}
.call>header{display:flex;flex-wrap:wrap;gap:.45rem;align-items:center;padding:.5rem .8rem;background:var(--v-raised);border-bottom:1px solid var(--v-border);font-size:.86rem}
.call>header .n{font-weight:700;color:var(--v-muted)}.call>header .model{font-weight:600}.call>header .stats{margin-left:auto;color:var(--v-muted);font-variant-numeric:tabular-nums}
.msg{padding:.6rem .8rem;border-bottom:1px dashed var(--v-border)}.msg:last-child{border-bottom:0}
.msg .who{font-size:.72rem;text-transform:uppercase;letter-spacing:.06em;font-weight:700;color:var(--v-muted);margin-bottom:.25rem}
.msg pre{margin:0;white-space:pre-wrap;word-break:break-word;max-width:none;font-size:.84rem;line-height:1.5;max-height:26rem;overflow:auto}
.msg .thumbs{margin:.4rem 0}
.msg.reply{background:var(--v-accent-soft)}.msg.reply .who{color:var(--v-accent)}
.viewer pre.judge-reply,.viewer pre.block{background:var(--v-code);border-radius:6px;padding:.6rem .8rem;white-space:pre-wrap;word-break:break-word;max-width:none;margin:0 0 .5rem}
.rating .scale{display:flex;gap:.35rem;margin:.2rem 0 .7rem}
.rating .scale button{flex:1;padding:.45rem 0;font-weight:700}
.rating .scale button[aria-pressed=true]{background:var(--v-accent);border-color:var(--v-accent);color:var(--v-accent-text)}
.rating textarea{width:100%;box-sizing:border-box;min-height:5.5rem;resize:vertical}
.rating input{width:100%;box-sizing:border-box}
.rating label{display:block;font-size:.82rem;color:var(--v-muted);margin:.5rem 0 .2rem}
.rating .row{display:flex;gap:.6rem;align-items:center;margin-top:.7rem}.rating .status{font-size:.85rem;color:var(--v-muted)}.rating .status.error{color:var(--v-bad)}
.rating ul{list-style:none;padding:0;margin:.8rem 0 0;font-size:.88rem}.rating li{padding:.35rem 0;border-top:1px solid var(--v-border)}
#plan img{display:block;max-width:100%;box-sizing:border-box;border-radius:6px;border:1px solid var(--v-border);cursor:zoom-in;background:#fff}
.steps{max-height:22rem;overflow:auto}.steps table.grid th,.steps table.grid td{padding:.3rem .5rem}
.loglines{margin:0;padding:0;list-style:none;font-size:.84rem}.loglines li{padding:.15rem 0;border-bottom:1px dotted var(--v-border);font-family:ui-monospace,monospace;white-space:pre-wrap;word-break:break-word}
.loglines .lvl{display:inline-block;min-width:4.5em;color:var(--v-muted)}.loglines .lvl.error,.loglines .lvl.warn,.loglines .lvl.warning{color:var(--v-bad)}
.viewer #compare tr.differs td.cmp-id{box-shadow:inset 3px 0 0 var(--v-warn)}
.viewer #compare .ins{background:var(--v-good-soft);color:var(--v-good);border-radius:3px}
.viewer #compare .del{background:var(--v-bad-soft);color:var(--v-bad);text-decoration:line-through;border-radius:3px}
.viewer .delta.up{color:var(--v-good);font-weight:650}.viewer .delta.down{color:var(--v-bad);font-weight:650}
.lightbox{position:fixed;inset:0;z-index:50;background:rgba(8,10,14,.86);display:flex;flex-direction:column;align-items:center;justify-content:center;gap:.7rem}
.lightbox[hidden]{display:none}
.lightbox .keys{max-width:30rem;margin:0}.lightbox .keys dt{white-space:nowrap}
.lightbox img{max-width:92vw;max-height:80vh;object-fit:contain;border-radius:6px;background:#fff}
.lightbox .bar{display:flex;gap:.8rem;align-items:center;color:#eef}
.lightbox .bar button{background:#2a2f38;color:#eef;border-color:#444b57}
.empty{color:var(--v-muted);font-style:italic}
.info-panel>summary{cursor:pointer;font-weight:600;color:var(--v-muted)}.info-panel[open]>summary{margin-bottom:.8rem}
.info-panel .stages{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(22rem,100%),1fr));gap:1rem}
.info-panel .stage{min-width:0}.info-panel pre.block{max-height:20rem;overflow:auto;font-size:.8rem}
.info-panel details>summary{cursor:pointer;color:var(--v-muted);font-size:.88rem;margin:.5rem 0}
.info-panel ul.reasons{margin:0;padding-left:1.1rem}.info-panel table.costs{margin-top:1rem}
.viewer .error{color:var(--v-bad)}
main.page[aria-busy=true]>*{opacity:.55;transition:opacity .15s .1s}
.help{color:var(--v-muted);font-size:.82rem;margin-top:.6rem}
`;

export const VIEWER_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>eqakit viewer</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<link rel="stylesheet" href="/viewer.css"></head>
<body class="viewer">
<header class="topbar"><a class="brand" href="#/">eqa<span>kit</span> viewer</a><nav><a href="#/" id="nav-runs">Runs</a><a href="#/compare" id="nav-compare">Compare</a><a href="/report" id="nav-report">Report</a></nav><span class="spacer"></span><span class="live" id="live" title="the page reloads what it shows when the runs' records change"><i></i><span>live</span></span><button type="button" id="theme" title="light, dark, or as the system">auto</button></header>
<main id="app" class="page"><p>loading…</p></main>
<div id="lightbox" class="lightbox" hidden><img id="lightbox-img" alt=""><div class="bar"><button type="button" id="lightbox-prev">← previous</button><span id="lightbox-caption"></span><button type="button" id="lightbox-next">next →</button><button type="button" id="lightbox-close">close (Esc)</button></div></div>
<div id="help" class="lightbox" hidden><section class="card keys"><h3>Keys</h3><dl class="facts">
<dt><span class="kbd">j</span> <span class="kbd">k</span> <span class="kbd">↓</span> <span class="kbd">↑</span></dt><dd>a run's questions: move through the list</dd>
<dt><span class="kbd">Enter</span></dt><dd>open the question chosen</dd>
<dt><span class="kbd">/</span></dt><dd>search the list</dd>
<dt><span class="kbd">j</span> <span class="kbd">k</span> <span class="kbd">→</span> <span class="kbd">←</span></dt><dd>a question: the next and the previous one</dd>
<dt><span class="kbd">1</span>–<span class="kbd">5</span> <span class="kbd">s</span></dt><dd>mark the answer, save the rating</dd>
<dt><span class="kbd">u</span> <span class="kbd">Esc</span></dt><dd>back to the list; Esc also closes a picture</dd>
<dt><span class="kbd">?</span></dt><dd>these keys</dd></dl></section></div>
<script src="/viewer.js"></script>
</body></html>
`;

export const VIEWER_SCRIPT = String.raw`(function(){
"use strict";
var app=document.getElementById("app");
var state={stamp:null,refresh:null,keys:null,order:{},filters:{},runs:null,dirty:false,saved:null,lastKey:null};
function el(tag,attrs,children){
  var e=document.createElement(tag);
  if(attrs)Object.keys(attrs).forEach(function(k){var v=attrs[k];if(v===undefined||v===null||v===false)return;
    if(k==="text")e.textContent=v;else if(k==="class")e.className=v;else if(k.slice(0,2)==="on"&&typeof v==="function")e.addEventListener(k.slice(2),v);else e.setAttribute(k,v===true?"":String(v));});
  (children||[]).forEach(function(c){if(c!==null&&c!==undefined&&c!==false)e.appendChild(typeof c==="string"||typeof c==="number"?document.createTextNode(String(c)):c);});
  return e;
}
function fmt(v,d){return v===null||v===undefined||!isFinite(v)?"–":Number(v).toFixed(d===undefined?1:d);}
function getJson(url){return fetch(url,{credentials:"same-origin"}).then(function(r){if(!r.ok)return r.text().then(function(t){throw new Error(url+": "+r.status+" "+t);});return r.json();});}
function clear(){while(app.firstChild)app.removeChild(app.firstChild);}
function typing(){var a=document.activeElement;return a&&(a.tagName==="INPUT"||a.tagName==="TEXTAREA"||a.tagName==="SELECT");}
function markCell(score,scale){
  if(score===undefined)return el("span",{"class":"mark none",text:"–"});
  if(score===null)return el("span",{"class":"mark s0",text:"failed"});
  var s=scale==="1-5"&&Math.round(score)!==score?fmt(score,2):String(score);
  return el("span",{"class":"mark s"+Math.max(0,Math.min(5,Math.round(score))),text:s});
}
function ratingText(list){if(!list||!list.length)return"";var m=list.reduce(function(a,r){return a+r.score;},0)/list.length;return (list.length===1?String(list[0].score):fmt(m,1))+(list.length>1?" ("+list.length+")":"");}
/* whether a view's answer is still wanted (its page is still open) and, when refreshing, says anything new */
function fresh(refreshing,hash,data){if(location.hash!==hash)return false;var key=JSON.stringify(data);if(refreshing&&key===state.lastKey)return false;state.lastKey=key;return true;}
function setNav(which){["runs","compare"].forEach(function(n){var a=document.getElementById("nav-"+n);if(a)a.className=n===which?"active":"";});}

/* a table whose columns sort on a click; rows are data, cells made by each column */
/* a long list puts PAGE rows at a time in the page (layout, not the script, is what a browser spends its time on) */
var PAGE=250;
function sortableTable(id,cls,columns,key){
  var sort=key&&state.filters[key]&&state.filters[key].sort||{col:null,dir:1};
  var limit=PAGE,last=[];
  var more=el("button",{type:"button","class":"more",id:id+"-more",hidden:true,onclick:function(){limit+=PAGE;paint();}});
  var tbody=el("tbody");
  var ths=columns.map(function(c,i){return el("th",{"class":(c.num?"num ":"")+(c.value?"sortable":"")+(c.w?" w-"+c.w:""),"data-col":i,scope:"col",text:c.label,title:c.title,onclick:c.value?function(){sort.dir=sort.col===i?-sort.dir:(c.num?-1:1);sort.col=i;if(key){state.filters[key]=state.filters[key]||{};state.filters[key].sort=sort;}paint();}:null});});
  var table=el("table",{"class":"grid "+(cls||""),id:id},[el("thead",{},[el("tr",{},ths)]),tbody]);
  var rows=[],rowAttrs=function(){return{};};
  var made=new WeakMap(),collator=new Intl.Collator(undefined,{numeric:true});
  function compare(a,b){var x=a.v,y=b.v;
    if(x===y)return 0;if(x===null||x===undefined||x==="")return 1;if(y===null||y===undefined||y==="")return -1;
    if(typeof x==="number"&&typeof y==="number")return sort.dir*(x-y);return sort.dir*collator.compare(String(x),String(y));}
  /* each row's element is made once and moved, so sorting and filtering a long list stay quick */
  function rowOf(r){var tr=made.get(r);if(!tr){tr=el("tr",rowAttrs(r),columns.map(function(c){var v=c.cell(r);return el("td",{"class":(c.num?"num ":"")+(c.cls||"")},[v]);}));made.set(r,tr);}return tr;}
  function paint(){
    var shown=rows;
    if(sort.col!==null){var c=columns[sort.col];shown=rows.map(function(r){return{r:r,v:c.value(r)};}).sort(compare).map(function(x){return x.r;});}
    var frag=document.createDocumentFragment();
    shown.slice(0,limit).forEach(function(r){var tr=rowOf(r);tr.classList.remove("selected");frag.appendChild(tr);});
    tbody.textContent="";tbody.appendChild(frag);
    last=shown;more.hidden=shown.length<=limit;more.textContent="show "+Math.min(PAGE,shown.length-limit)+" more ("+Math.min(limit,shown.length)+" of "+shown.length+" shown)";
    ths.forEach(function(th,i){if(i===sort.col)th.setAttribute("aria-sort",sort.dir>0?"ascending":"descending");else th.removeAttribute("aria-sort");});
    table.dispatchEvent(new CustomEvent("painted",{detail:shown}));
  }
  return {table:table,tbody:tbody,more:more,box:el("div",{"class":"card flush"},[table,more]),
    extend:function(){if(last.length<=limit)return false;limit+=PAGE;paint();return true;},
    set:function(list,attrs){rows=list;limit=PAGE;if(attrs)rowAttrs=attrs;paint();}};
}

/* rows chosen with j/k or the arrows, opened with Enter */
function listKeys(tbody,open,extend){
  var at=-1;
  function rowsNow(){return Array.prototype.slice.call(tbody.rows);}
  function select(i){var rs=rowsNow();if(!rs.length)return;var old=tbody.querySelector("tr.selected");if(old)old.classList.remove("selected");at=Math.max(0,Math.min(rs.length-1,i));rs[at].classList.add("selected");rs[at].scrollIntoView({block:"nearest"});}
  return function(e){
    var sel=tbody.querySelector("tr.selected");at=sel?Array.prototype.indexOf.call(tbody.rows,sel):-1;
    if(e.key==="j"||e.key==="ArrowDown"){if(at+1>=tbody.rows.length&&extend)extend();select(at+1);e.preventDefault();}
    else if(e.key==="k"||e.key==="ArrowUp"){select(at-1);e.preventDefault();}
    else if(e.key==="Enter"&&at>=0){var r=rowsNow()[at];if(r)open(r.getAttribute("data-id"));}
  };
}

/* a run's headline figures as the paper names them: "C* 40.0 %", "E_path 12.5 %" */
function metricText(m){if(m.value===null||m.value===undefined)return m.name+" –";var v=m.unit===""&&Number.isInteger(m.value)?String(m.value):fmt(m.value,m.unit===""&&Math.abs(m.value)<10?2:1);return m.name+" "+v+(m.unit?" "+m.unit:"");}
function figureChips(list){return el("span",{"class":"figures"},list.map(function(m){return el("span",{"class":"figure-chip",title:m.about||"","data-metric":m.name,text:metricText(m)});}));}

function runsView(refreshing){
  setNav("runs");
  var hash=location.hash;
  return getJson("/api/runs").then(function(data){
    if(!fresh(refreshing,hash,data))return;
    state.runs=data.runs;
    clear();
    app.appendChild(el("div",{"class":"pagehead"},[el("h2",{text:"Runs"}),el("span",{"class":"meta",text:data.runs.length+" run(s) · LLM-Match in points (0-100), TAG-EQA structured score 1-5"})]));
    var cols=[
      {label:"run",value:function(r){return r.label;},cell:function(r){return el("a",{href:"#/run/"+r.index,text:r.label});}},
      {label:"kind",value:function(r){return r.kind;},cell:function(r){return el("span",{},[el("span",{"class":"pill",text:r.kind}),r.inProgress?" ":null,r.inProgress?el("span",{"class":"pill warn","data-field":"in-progress",title:"no summary yet: the run is still going, or was stopped",text:"in progress"}):null]);}},
      {label:"agent",value:function(r){return r.agent||"";},cell:function(r){return r.agent||"–";}},
      {label:"judge",value:function(r){return r.judge||"";},cell:function(r){return r.judge||"–";}},
      {label:"questions",num:true,value:function(r){return r.questions;},cell:function(r){return String(r.questions);}},
      {label:"rated",num:true,title:"questions a reviewer rated",value:function(r){return r.rated;},cell:function(r){return String(r.rated||0);}},
      {label:"score",num:true,title:"LLM-Match 0-100 · TAG 1-5",value:function(r){return r.overall;},cell:function(r){return el("span",{"data-field":"overall",title:r.scale==="1-5"?"structured score, 1-5 (grounded)":"LLM-Match, 0-100",text:fmt(r.overall,r.scale==="1-5"?2:1)});}},
      {label:"95% CI",num:true,cell:function(r){return r.ci?"["+fmt(r.ci[0],r.scale==="1-5"?2:1)+", "+fmt(r.ci[1],r.scale==="1-5"?2:1)+"]":"–";}},
      {label:"the kind's own figures",cls:"text",cell:function(r){return figureChips(r.metrics||[]);}}
    ];
    var t=sortableTable("runs","",cols,"runs");
    t.set(data.runs,function(r){return{"data-index":r.index};});
    app.appendChild(t.box);
    if(data.runs.length>1)app.appendChild(el("p",{"class":"help"},["Compare two runs question by question: ",el("a",{href:"#/compare/0/1",text:"compare"}),"."]));
  });
}

/* how a run was made: per stage the command, version, dates, models, modes, counts, failures; tokens and dollars per role */
function infoPanel(info,saved){
  var box=el("details",{"class":"card info-panel",id:"run-info",open:!!saved.info},[el("summary",{text:"How this run was made · "+info.stages.map(function(s){return s.name;}).join(", ")})]);
  box.addEventListener("toggle",function(){saved.info=box.open;});
  var grid=el("div",{"class":"stages"});
  info.stages.forEach(function(st){
    var dl=el("dl",{"class":"facts"});
    function row(k,v){if(v===null||v===undefined||v==="")return;dl.appendChild(el("dt",{text:k}));dl.appendChild(el("dd",{},[v]));}
    row("command",st.command?el("code",{"class":"text",text:st.command}):null);
    row("when",[st.createdAt?"finished "+st.createdAt.replace("T"," ").replace(/\.\d+Z$/," UTC"):"",st.wallTimeMs!==null?"in "+fmt(st.wallTimeMs/1000)+" s":"",st.eqakitVersion?"eqakit "+st.eqakitVersion:""].filter(Boolean).join(" · "));
    row("models",st.models.length?el("div",{},st.models.map(function(m){return el("div",{},[el("span",{"class":"pill",text:m.role})," "+m.name,m.endpoint?el("code",{text:" "+m.endpoint}):null]);})):null);
    st.modes.forEach(function(m){row(m[0],el("span",{"class":"text",text:m[1]}));});
    row("counts",st.counts.length?st.counts.map(function(c){return c[0]+" "+c[1];}).join(" · "):null);
    row("replies not answers",st.replyStatuses.length?st.replyStatuses.map(function(c){return c[1]+" "+c[0];}).join(", "):"none");
    row("failures",st.failures.length?el("ul",{"class":"reasons"},st.failures.map(function(f){return el("li",{},[el("b",{text:String(f[1])})," ",el("span",{"class":"text",text:f[0]})]);})):"none");
    grid.appendChild(el("section",{"class":"stage"},[el("h3",{text:st.name}),dl,el("details",{},[el("summary",{text:"configuration"}),el("pre",{"class":"block",text:JSON.stringify(st.config,null,2)})])]));
  });
  box.appendChild(grid);
  if(info.costs.length)box.appendChild(el("div",{"class":"table-box"},[el("table",{"class":"grid costs",id:"run-costs"},[el("thead",{},[el("tr",{},["stage","role","model","calls","cache hits","prompt tokens","completion tokens","dollars"].map(function(h,i){return el("th",{"class":i>2?"num":"",text:h});}))]),
    el("tbody",{},info.costs.map(function(c){return el("tr",{},[el("td",{text:c.stage}),el("td",{text:c.role}),el("td",{text:c.model}),el("td",{"class":"num",text:String(c.calls)}),el("td",{"class":"num",text:String(c.cacheHits)}),el("td",{"class":"num",text:String(c.promptTokens)}),el("td",{"class":"num",text:String(c.completionTokens)}),el("td",{"class":"num",text:c.dollars})]);}))])]));
  return box;
}

function runView(index,refreshing){
  setNav("runs");
  var hash=location.hash;
  return Promise.all([getJson("/api/runs/"+index),state.runs?Promise.resolve({runs:state.runs}):getJson("/api/runs")]).then(function(both){
    if(!fresh(refreshing,hash,both))return;
    var run=both[0],all=both[1].runs;state.runs=all;
    var key="run"+index,saved=state.filters[key]=state.filters[key]||{};
    var scale=run.scoreLabel?run.scoreLabel.column:null;
    var explore=run.questions.some(function(q){return q.stop!==undefined;});
    clear();
    app.appendChild(el("div",{"class":"pagehead"},[el("h2",{text:run.label}),el("span",{"class":"pill accent",text:run.kind}),el("span",{"class":"meta",text:run.questions.length+" questions"}),el("span",{"class":"spacer"}),el("a",{href:"/api/runs/"+index+"/questions.csv",id:"csv-export",download:"",text:"table as CSV"}),el("a",{href:"/api/runs/"+index+"/ratings/export.json",id:"ratings-export",download:"",text:"export ratings (for eqa judge-agreement)"})]));
    if(run.metrics&&run.metrics.length)app.appendChild(el("div",{"class":"figures",id:"run-metrics"},[figureChips(run.metrics)]));
    if(run.notes&&run.notes.length)app.appendChild(el("ul",{"class":"notes"},run.notes.map(function(n){return el("li",{text:n});})));
    if(run.info&&(run.info.stages.length||run.info.costs.length))app.appendChild(infoPanel(run.info,saved));
    var runSel=el("select",{id:"f-run","aria-label":"run"},all.map(function(r){return el("option",{value:String(r.index),text:r.label+(r.agent?" · "+r.agent:""),selected:String(r.index)===String(index)});}));
    runSel.addEventListener("change",function(){location.hash="#/run/"+runSel.value;});
    var catSel=el("select",{id:"f-category","aria-label":"category"},[""].concat(run.categories).map(function(c){return el("option",{value:c,text:c||"all categories"});}));
    var scoreSel=el("select",{id:"f-score","aria-label":"score"},[["","any score"],["5","5"],["4","4"],["3","3"],["2","2"],["1","1"],["0","0 (no answer)"],["failed","not scored"]].map(function(p){return el("option",{value:p[0],text:p[1]});}));
    var ratedSel=el("select",{id:"f-rated","aria-label":"rated"},[["","rated or not"],["yes","rated"],["no","not rated"]].map(function(p){return el("option",{value:p[0],text:p[1]});}));
    var search=el("input",{id:"f-search",type:"search",placeholder:"search id, question, answer  ( / )"});
    var count=el("span",{id:"f-count","class":"count"});
    catSel.value=saved.category||"";scoreSel.value=saved.score||"";ratedSel.value=saved.rated||"";search.value=saved.search||"";
    var cols=[
      {label:"id",w:"id",value:function(q){return q.questionId;},cell:function(q){return el("code",{"class":"qid",title:q.questionId,text:q.questionId});}},
      {label:"category",w:"cat",value:function(q){return q.category||"";},cell:function(q){return q.category||"–";}},
      {label:"question",cls:"text qtext",value:function(q){return q.question||"";},cell:function(q){return q.question||"–";}}
    ];
    if(run.questions.some(function(q){return q.groundTruth!==undefined&&q.groundTruth!==null;}))cols.push({label:"ground truth",cls:"text gt",value:function(q){return q.groundTruth||"";},cell:function(q){return q.groundTruth===undefined||q.groundTruth===null?"–":String(q.groundTruth);}});
    cols.push(
      {label:"answer",w:"ans",cls:"text answer",value:function(q){return q.answer===null?"":q.answer;},cell:function(q){return q.answer===null?el("span",{"class":"empty",text:"(no answer)"}):q.answer===undefined?"–":String(q.answer);}}
    );
    if(explore)cols.push({label:"stop",w:"stop",value:function(q){return q.stop||"";},cell:function(q){return q.error?el("span",{"class":"pill bad",text:"failed"}):el("span",{"class":"pill",text:q.stop||"–"});}},{label:"path m",w:"path",num:true,value:function(q){return q.pathLengthM;},cell:function(q){return fmt(q.pathLengthM,1);}});
    if(scale)cols.push({label:scale,w:"mark",num:true,title:run.scoreLabel.scale,value:function(q){return q.score===undefined?null:q.score===null?-1:q.score;},cell:function(q){return markCell(q.score,scale==="σ"?"σ":"1-5");}});
    cols.push({label:"rated",w:"rated",num:true,title:"reviewers' marks (1-5)",value:function(q){return q.ratings.length?q.ratings.reduce(function(a,r){return a+r.score;},0)/q.ratings.length:null;},cell:function(q){return ratingText(q.ratings);}});
    var t=sortableTable("questions","question-list",cols,key);
    function visible(){
      var c=catSel.value,s=scoreSel.value,rt=ratedSel.value,x=search.value.toLowerCase();
      saved.category=c;saved.score=s;saved.rated=rt;saved.search=search.value;
      return run.questions.filter(function(q){
        if(c&&q.category!==c)return false;
        if(s==="failed"&&q.score!==null&&q.score!==undefined)return false;
        if(s&&s!=="failed"&&String(q.score)!==s)return false;
        if(rt==="yes"&&!q.ratings.length)return false;if(rt==="no"&&q.ratings.length)return false;
        if(x&&(q.questionId+" "+(q.question||"")+" "+(q.answer||"")).toLowerCase().indexOf(x)<0)return false;
        return true;
      });
    }
    function open(id){location.hash="#/run/"+index+"/q/"+encodeURIComponent(id);}
    t.table.addEventListener("painted",function(e){var shown=e.detail;state.order[index]=shown.map(function(q){return q.questionId;});count.textContent=shown.length+" of "+run.questions.length;});
    function render(){t.set(visible(),function(q){return{"data-id":q.questionId,onclick:function(){open(q.questionId);}};});}
    [catSel,scoreSel,ratedSel,search].forEach(function(x){x.addEventListener("input",render);x.addEventListener("change",render);});
    app.appendChild(el("div",{"class":"filters"},[runSel,catSel,scoreSel,ratedSel,search,count]));
    app.appendChild(t.box);
    app.appendChild(el("p",{"class":"help"},[el("span",{"class":"kbd",text:"j"})," ",el("span",{"class":"kbd",text:"k"})," move, ",el("span",{"class":"kbd",text:"Enter"})," opens, ",el("span",{"class":"kbd",text:"/"})," searches, ",el("span",{"class":"kbd",text:"?"})," lists every key; click a column to sort it."]));
    render();
    var keys=listKeys(t.tbody,open,t.extend);
    state.keys=function(e){if(e.key==="/"){search.focus();e.preventDefault();return;}keys(e);};
  });
}

/* the frame lightbox: a list of pictures, ←/→ to move, Esc to close */
var box={list:[],at:0,node:document.getElementById("lightbox"),img:document.getElementById("lightbox-img"),caption:document.getElementById("lightbox-caption")};
function showBox(){var p=box.list[box.at];box.img.setAttribute("src",p.full);box.img.setAttribute("alt",p.caption);box.caption.textContent=p.caption+"  ("+(box.at+1)+" of "+box.list.length+")";}
function openBox(list,at){box.list=list;box.at=at;box.node.hidden=false;showBox();}
function closeBox(){box.node.hidden=true;box.img.removeAttribute("src");}
function moveBox(d){if(!box.list.length)return;box.at=(box.at+d+box.list.length)%box.list.length;showBox();}
document.getElementById("lightbox-close").addEventListener("click",closeBox);
document.getElementById("lightbox-prev").addEventListener("click",function(){moveBox(-1);});
document.getElementById("lightbox-next").addEventListener("click",function(){moveBox(1);});
box.node.addEventListener("click",function(e){if(e.target===box.node)closeBox();});
function thumbs(list,id){
  var usable=list.filter(function(p){return p.thumb;});
  var pics=usable.map(function(p){return{full:p.full||p.thumb,caption:p.frame===null||p.frame===undefined?"image":"frame "+p.frame};});
  return el("div",{"class":"thumbs",id:id},usable.map(function(p,i){return el("button",{type:"button","class":"thumb",title:pics[i].caption+" (click to enlarge)",onclick:function(){openBox(pics,i);}},[el("img",{src:p.thumb,alt:pics[i].caption,loading:"lazy"}),el("span",{text:pics[i].caption})]);}));
}

function callItem(c,i){
  var stats=[];
  if(c.promptTokens!==null)stats.push(c.promptTokens+" → "+c.completionTokens+" tokens"+(c.thinkingTokens?" ("+c.thinkingTokens+" thinking)":""));
  if(c.latencyMs!==null)stats.push(c.cached?"cached":(c.latencyMs>=1000?fmt(c.latencyMs/1000,1)+" s":c.latencyMs+" ms"));
  if(c.cost)stats.push(c.cost);
  var head=el("header",{},[el("span",{"class":"n",text:"#"+(i+1)}),el("span",{"class":"pill accent",text:c.role}),el("span",{"class":"model",text:c.model}),el("code",{text:c.prompt}),c.cached?el("span",{"class":"pill",text:"cached"}):null,
    c.stopCheck?el("span",{"class":"pill "+(c.stopCheck.yes?"good":"warn"),text:"stop check: "+(c.stopCheck.yes?"yes":"no")+(c.stopCheck.confidence!==null?" · P(yes) "+fmt(c.stopCheck.confidence,2):"")}):null,
    el("span",{"class":"stats",text:stats.join(" · ")})]);
  var body=[];
  if(c.messages){c.messages.forEach(function(m){
    var texts=m.parts.filter(function(p){return p.type==="text";}).map(function(p){return p.text;}).join("");
    var imgs=m.parts.filter(function(p){return p.type==="image";});
    body.push(el("div",{"class":"msg"},[el("div",{"class":"who",text:m.role+(m.toolName?" · "+m.toolName:"")+(imgs.length?" · "+imgs.length+" image(s)":"")}),imgs.length?thumbs(imgs):null,texts?el("pre",{text:texts}):null,
      m.toolCalls?el("pre",{text:m.toolCalls.map(function(t){return "→ "+t.name+" "+JSON.stringify(t.arguments);}).join("\n")}):null]));
  });}
  else{body.push(el("div",{"class":"msg"},[el("div",{"class":"who",text:"sent"+(c.images.length?" · "+c.images.length+" frame(s)":"")}),c.images.length?thumbs(c.images):null,el("p",{"class":"empty",text:"the prompt "+c.prompt+" (this trace was written before traces kept the messages)"})]));}
  body.push(el("div",{"class":"msg reply"},[el("div",{"class":"who",text:"reply"}),el("pre",{text:c.reply===null?"(no reply)":c.reply})]));
  return el("li",{"class":"call"},[head].concat(body));
}

function section(title,children,id){return el("section",{"class":"card",id:id},[el("h3",{text:title})].concat(children));}

function ratingCard(index,q){
  var chosen=null,reviewer=localStorage.getItem("eqa-reviewer")||"";
  var mine=q.ratings.filter(function(r){return r.reviewer===reviewer;})[0];
  var buttons=[1,2,3,4,5].map(function(n){return el("button",{type:"button",id:"rate-"+n,"aria-pressed":"false",title:["","wrong","mostly wrong","partly right","mostly right","right"][n],text:String(n),onclick:function(){choose(n);}});});
  var who=el("input",{id:"rate-reviewer",placeholder:"your name",value:reviewer,maxlength:"64",autocomplete:"off"});
  var comment=el("textarea",{id:"rate-comment",maxlength:"2000",placeholder:"what is right or wrong with the answer"});
  var status=el("span",{"class":"status",id:"rate-status"});
  var list=el("ul",{id:"rate-list"});
  comment.addEventListener("input",function(){state.dirty=true;});
  function choose(n){chosen=n;state.dirty=true;buttons.forEach(function(b,i){b.setAttribute("aria-pressed",String(i+1===n));});}
  function paintList(rs){while(list.firstChild)list.removeChild(list.firstChild);rs.forEach(function(r){list.appendChild(el("li",{},[el("span",{"class":"mark s"+r.score,text:String(r.score)})," ",el("b",{text:r.reviewer}),r.comment?el("div",{"class":"text",text:r.comment}):null]));});}
  if(mine){choose(mine.score);comment.value=mine.comment;state.dirty=false;}
  if(state.saved&&state.saved.id===q.questionId)status.textContent=state.saved.text;
  paintList(q.ratings);
  function save(){
    var name=who.value.trim();
    if(!chosen){status.className="status error";status.textContent="choose a mark from 1 to 5";return;}
    if(!name){status.className="status error";status.textContent="give your name: ratings are kept per reviewer";who.focus();return;}
    localStorage.setItem("eqa-reviewer",name);
    status.className="status";status.textContent="saving…";
    fetch("/api/runs/"+index+"/ratings",{method:"POST",credentials:"same-origin",headers:{"content-type":"application/json","x-eqa-view":"rate"},body:JSON.stringify({questionId:q.questionId,score:chosen,comment:comment.value,reviewer:name})})
      .then(function(r){return r.json().then(function(b){if(!r.ok)throw new Error(b.error||String(r.status));return b;});})
      .then(function(b){state.dirty=false;q.ratings=b.ratings;paintList(b.ratings);state.saved={id:q.questionId,text:"saved "+new Date().toLocaleTimeString()};status.className="status";status.textContent=state.saved.text;})
      .catch(function(e){status.className="status error";status.textContent=String(e.message||e);});
  }
  return el("section",{"class":"card rating",id:"rating"},[el("h3",{text:"Your rating"}),el("div",{"class":"scale"},buttons),
    el("label",{"for":"rate-comment",text:"comment"}),comment,el("label",{"for":"rate-reviewer",text:"reviewer"}),who,
    el("div",{"class":"row"},[el("button",{type:"button","class":"primary",id:"rate-save",text:"save rating",onclick:save}),status]),
    el("p",{"class":"help",text:"keys 1-5 mark, s saves; kept in the run's ratings.jsonl"}),list]);
}

function questionView(index,id,refreshing){
  setNav("runs");
  var hash=location.hash;
  var orderReady=state.order[index]?Promise.resolve():getJson("/api/runs/"+index).then(function(run){state.order[index]=run.questions.map(function(x){return x.questionId;});});
  return Promise.all([getJson("/api/runs/"+index+"/questions?id="+encodeURIComponent(id)),orderReady]).then(function(both){
    var q=both[0],t=q.transcript,order=state.order[index]||[],at=order.indexOf(id);
    // a rating being made is never swept away by a refresh, nor a newer page by an older answer
    if((refreshing&&state.dirty)||!fresh(refreshing,hash,q))return;
    clear();
    function go(d){var n=order[at+d];if(n!==undefined)location.hash="#/run/"+index+"/q/"+encodeURIComponent(n);}
    app.appendChild(el("div",{"class":"qnav"},[el("a",{href:"#/run/"+index,text:"← "+q.runLabel}),el("span",{"class":"grow"}),
      el("span",{"class":"pos",id:"q-position",text:at>=0?(at+1)+" of "+order.length:""}),
      el("button",{type:"button",id:"prev",disabled:at<=0,onclick:function(){go(-1);},title:"previous question (k or ←)",text:"← previous"}),
      el("button",{type:"button",id:"next",disabled:at<0||at>=order.length-1,onclick:function(){go(1);},title:"next question (j or →)",text:"next →"})]));
    app.appendChild(el("h2",{id:"question-text","class":"text",text:q.question||q.questionId}));
    var dl=el("dl",{id:"question-detail","class":"facts"});
    function row(k,v,cls){if(v===null||v===undefined)return;dl.appendChild(el("dt",{text:k}));dl.appendChild(el("dd",{"class":"text "+(cls||""),text:v}));}
    row("id",q.questionId);row("category",q.category||"–");
    if(q.choices&&q.choices.length)row("choices",q.choices.map(function(c,i){return String.fromCharCode(65+i)+") "+c;}).join("\n"));
    row("ground truth",q.groundTruth===undefined?"–":q.groundTruth+(q.extraAnswers?" (also: "+q.extraAnswers.join("; ")+")":""));
    row("answer",q.answer===null?"(no answer)":q.answer===undefined?"–":String(q.answer),"answer");
    if(q.forceGuess==="guess")row("agent's own answer (replaced by force-a-guess)",q.agentAnswer===null?"(nothing)":q.agentAnswer);
    if(q.tag){var tg=q.tag,e=tg.errors;
      row("structured score (grounded)",tg.score===null?"failed":fmt(tg.groundedScore,2)+" · ungrounded "+fmt(tg.ungroundedScore,2)+(tg.valid?"":" · invalid answer"));
      if(tg.truthText!==null)row("true structure",tg.truthText,"structured-truth");
      if(tg.predictedText!==null)row(tg.source==="judge"?"structure the judge read":"structure scored",tg.predictedText,"structured-predicted");
      if(e)row("errors","objects: "+e.objectFalsePositives+" false positive(s), "+e.objectFalseNegatives+" false negative(s); predicates: "+e.predicateFalsePositives+" false positive(s), "+e.predicateFalseNegatives+" false negative(s)");
    }else if(q.scoreLabel)row(q.scoreLabel.row,q.score===undefined?"–":q.score===null?"failed":String(q.score)+" ("+fmt(q.points)+" points)");
    if(!q.tag&&q.truthText)row("true structure",q.truthText,"structured-truth");
    if(q.eac)row("EAC (EXPRESS-Bench)",q.eac.error!==undefined?"failed: "+q.eac.error:"δ·σ "+fmt(q.eac.score,2)+" (grounding δ "+q.eac.grounding+", accuracy σ "+q.eac.accuracy+")");
    if(q.correct!==undefined&&!(q.choices&&q.choices.length))row("score",q.correct?"right (exact match)":"wrong (exact match)");
    if(q.history)row("history",q.history);
    if(t&&t.stop)row("stop",t.stop+(t.pathLengthM!==null?" · path "+fmt(t.pathLengthM,2)+" m, "+t.pathLengthSteps+" steps":""));
    if(t&&t.task)row("recorded task",t.task);
    if(q.error)row("error",q.error,"error");
    var facts=[el("section",{"class":"card"},[dl])],main=[];
    if(q.judgeReplies&&q.judgeReplies.length)facts.push(section("Judge's reply",q.judgeReplies.map(function(r){return el("pre",{"class":"judge-reply",text:r===null?"(empty)":r});})));
    if(t){
      if(t.calls.length)main.push(section("Transcript · "+t.calls.length+" model call(s)"+(t.agent?" · "+t.agent:""),[el("ol",{"class":"calls",id:"trace"},t.calls.map(callItem))],"transcript"));
      else if(q.calls&&q.calls.length)main.push(section("Trace",[el("ol",{"class":"calls",id:"trace"},q.calls.map(function(c,i){return callItem({role:c.role,model:c.model,prompt:c.prompt,cached:c.cached,reply:c.reply,promptTokens:null,latencyMs:null,images:[]},i);}))]));
      if(t.toolCalls.length)main.push(section("Tool calls",t.toolCalls.map(function(x){return el("div",{"class":"msg"},[el("div",{"class":"who",text:"round "+x.round+" · "+x.name}),el("pre",{text:JSON.stringify(x.arguments)+"\n→ "+x.result})]);}),"tool-calls"));
      if(t.captions.length)main.push(section("Captions",t.captions.map(function(c){return el("div",{"class":"msg"},[el("div",{"class":"who",text:"frame "+c.frame}),el("pre",{text:c.caption})]);}),"captions"));
      if(t.log.length)main.push(section("Agent's log",[el("ul",{"class":"loglines",id:"agent-log"},t.log.map(function(l){return el("li",{},[el("span",{"class":"lvl "+l.level,text:l.level}),l.message]);}))],"log"));
      if(t.stderr)main.push(section("Agent's stderr",[el("pre",{"class":"block",id:"agent-stderr",text:t.stderr})]));
      if(t.notes.length)main.push(section("Notes",[el("ul",{"class":"notes"},t.notes.map(function(n){return el("li",{text:n});}))]));
    }
    /* an answer the run does not hold (its predictions moved away: the notes say so) is not asked to be rated */
    var side=[q.answer===undefined?section("Your rating",[el("p",{"class":"empty",id:"no-answer",text:"This run holds no answer to this question, so there is nothing to rate (the run's notes say why)."})]):ratingCard(index,q)];
    if(q.frames&&q.frames.length&&q.framesServed){
      var base="/api/runs/"+index+"/frames/"+encodeURIComponent(q.questionId)+"/";
      side.push(section("Frames the agent used",[thumbs(q.frames.map(function(f){return{frame:f,thumb:base+f+"?size=thumb",full:base+f+"?size=full"};}),"frames")],"frames-card"));
    }
    if(t&&(t.plan||t.steps.length)){
      var plan=[];
      if(t.plan){var pic=[{full:t.plan,caption:"top-down plan"}];plan.push(el("img",{src:t.plan,alt:"top-down plan with the trajectory",id:"plan-img",onclick:function(){openBox(pic,0);}}));}
      if(t.steps.length)plan.push(el("div",{"class":"steps"},[el("table",{"class":"grid",id:"steps"},[el("thead",{},[el("tr",{},["step","action","","x","z"].map(function(h){return el("th",{text:h});}))]),el("tbody",{},t.steps.map(function(s){return el("tr",{},[el("td",{"class":"num",text:String(s.step)}),el("td",{text:s.action||"start"}),el("td",{text:s.success?"":"blocked"}),el("td",{"class":"num",text:fmt(s.position[0],2)}),el("td",{"class":"num",text:fmt(s.position[2],2)})]);}))])]));
      side.push(section("Plan and trajectory",plan,"plan"));
    }
    if(t&&t.stopChecks.length)side.push(section("Stop checks",[el("ul",{"class":"loglines",id:"stop-checks"},t.stopChecks.map(function(s){return el("li",{},[el("span",{"class":"lvl",text:"frame "+s.frame}),(s.yes?"yes":"no")+(s.confidence!==null?" · P(yes) "+fmt(s.confidence,2)+" ("+s.source+")":"")]);}))]));
    app.appendChild(el("div",{"class":"question-layout"},[el("div",{"class":"facts"},facts),el("aside",{},side),el("div",{"class":"rest"},main)]));
    state.keys=function(e){
      if(!box.node.hidden){if(e.key==="Escape")closeBox();else if(e.key==="ArrowRight")moveBox(1);else if(e.key==="ArrowLeft")moveBox(-1);return;}
      if(e.key==="j"||e.key==="ArrowRight")go(1);else if(e.key==="k"||e.key==="ArrowLeft")go(-1);
      else if(/^[1-5]$/.test(e.key)){var b=document.getElementById("rate-"+e.key);if(b)b.click();}
      else if(e.key==="s"){var s=document.getElementById("rate-save");if(s)s.click();}
      else if(e.key==="Escape"||e.key==="u")location.hash="#/run/"+index;
    };
  });
}

/* words removed from a (in b's place) and added in b, by their longest common subsequence */
function wordDiff(a,b){
  var x=a.split(/(\s+)/),y=b.split(/(\s+)/);
  if(x.length*y.length>90000)return [[{t:a,k:"del"}],[{t:b,k:"ins"}]];
  var n=x.length,m=y.length,L=[],i,j;
  for(i=0;i<=n;i++){L.push(new Array(m+1).fill(0));}
  for(i=n-1;i>=0;i--)for(j=m-1;j>=0;j--)L[i][j]=x[i]===y[j]?L[i+1][j+1]+1:Math.max(L[i+1][j],L[i][j+1]);
  var outA=[],outB=[];i=0;j=0;
  while(i<n&&j<m){if(x[i]===y[j]){outA.push({t:x[i]});outB.push({t:y[j]});i++;j++;}else if(L[i+1][j]>=L[i][j+1]){outA.push({t:x[i],k:/^\s+$/.test(x[i])?null:"del"});i++;}else{outB.push({t:y[j],k:/^\s+$/.test(y[j])?null:"ins"});j++;}}
  for(;i<n;i++)outA.push({t:x[i],k:"del"});for(;j<m;j++)outB.push({t:y[j],k:"ins"});
  return [outA,outB];
}
function diffNode(parts){return el("span",{},parts.map(function(p){return p.k?el("span",{"class":p.k,text:p.t}):p.t;}));}
function answerOf(side){return side&&side.answer!==undefined&&side.answer!==null?String(side.answer):null;}

function compareView(a,b,refreshing){
  setNav("compare");
  var hash=location.hash;
  /* without a choice, the first two runs are compared; one run has nothing to compare with */
  return getJson("/api/runs").then(function(data){
    if(a===undefined&&data.runs.length>=2){a="0";b="1";}
    return Promise.all([data,a===undefined?null:getJson("/api/compare?a="+a+"&b="+b)]);
  }).then(function(both){
    if(!fresh(refreshing,hash,both))return;
    var data=both[0];
    state.runs=data.runs;
    clear();
    app.appendChild(el("div",{"class":"pagehead"},[el("h2",{text:"Compare two runs"}),el("span",{"class":"meta",text:"answers side by side; changed words highlighted"})]));
    if(data.runs.length<2){app.appendChild(el("p",{"class":"empty",id:"cmp-one",text:"Compare needs two runs: this viewer serves one. Start it with two or more, e.g. eqa view runs/a runs/b."}));return;}
    function sel(id,v){return el("select",{id:id},data.runs.map(function(r){return el("option",{value:String(r.index),text:r.label,selected:String(r.index)===String(v)});}));}
    var sa=sel("cmp-a",a===undefined?0:a),sb=sel("cmp-b",b===undefined?Math.min(1,data.runs.length-1):b);
    function go(){location.hash="#/compare/"+sa.value+"/"+sb.value;}
    sa.addEventListener("change",go);sb.addEventListener("change",go);
    var saved=state.filters.compare=state.filters.compare||{};
    var differs=el("input",{type:"checkbox",id:"cmp-differs"});differs.checked=!!saved.differs;
    var count=el("span",{"class":"count",id:"cmp-count"});
    app.appendChild(el("div",{"class":"filters"},[sa,el("span",{text:"vs"}),sb,el("label",{},[differs,"differs only"]),count]));
    if(a===undefined)return;
    return Promise.resolve(both[1]).then(function(cmp){
      cmp.rows.forEach(function(r){var sa_=r.a&&r.a.score,sb_=r.b&&r.b.score;r.delta=typeof sa_==="number"&&typeof sb_==="number"?sb_-sa_:null;r.changed=answerOf(r.a)!==answerOf(r.b);r.differs=r.changed||(r.a&&r.b&&r.a.score!==r.b.score)||!r.a||!r.b;});
      app.appendChild(el("p",{id:"cmp-summary",text:cmp.summary}));
      if(cmp.deltas&&cmp.deltas.length)app.appendChild(el("div",{"class":"card flush"},[el("table",{"class":"grid",id:"cmp-deltas"},[
        el("thead",{},[el("tr",{},[["category",""],["questions","num"],[cmp.a,"num"],[cmp.b,"num"],["Δ points","num"],["95% CI (paired bootstrap)","num"],["higher / lower","num"],["",""]].map(function(h){return el("th",{"class":h[1],text:h[0]});}))]),
        el("tbody",{},cmp.deltas.map(function(d){return el("tr",{"data-group":d.group,"class":d.significant?"significant":""},[el("td",{text:d.group}),el("td",{"class":"num",text:String(d.n)}),el("td",{"class":"num",text:fmt(d.a)}),el("td",{"class":"num",text:fmt(d.b)}),
          el("td",{"class":"num"},[el("span",{"class":"delta "+(d.difference>0?"up":d.difference<0?"down":""),text:(d.difference>0?"+":"")+fmt(d.difference)})]),el("td",{"class":"num",text:"["+fmt(d.ci[0])+", "+fmt(d.ci[1])+"]"}),el("td",{"class":"num",text:d.higher+" / "+d.lower}),
          el("td",{},[d.significant?el("span",{"class":"pill "+(d.difference>0?"good":"bad"),title:"the interval leaves out 0 (and the group has at least 10 questions)",text:"significant"}):null])]);}))])]));
      var cols=[
        {label:"id",cls:"cmp-id",value:function(r){return r.questionId;},cell:function(r){return el("a",{href:"#/run/"+a+"/q/"+encodeURIComponent(r.questionId)},[el("code",{"class":"qid",title:r.questionId,text:r.questionId})]);}},
        {label:"question",cls:"text qtext",value:function(r){return r.question||"";},cell:function(r){return r.question||"–";}},
        {label:cmp.a+": answer",cls:"text answer a",value:function(r){return answerOf(r.a)||"";},cell:function(r){var x=answerOf(r.a),y=answerOf(r.b);if(x===null)return r.a?el("span",{"class":"empty",text:"(no answer)"}):"–";return r.changed&&y!==null?diffNode(wordDiff(x,y)[0]):x;}},
        {label:"σ",num:true,value:function(r){return r.a&&typeof r.a.score==="number"?r.a.score:null;},cell:function(r){return r.a?markCell(r.a.score):"–";}},
        {label:cmp.b+": answer",cls:"text answer b",value:function(r){return answerOf(r.b)||"";},cell:function(r){var x=answerOf(r.a),y=answerOf(r.b);if(y===null)return r.b?el("span",{"class":"empty",text:"(no answer)"}):"–";return r.changed&&x!==null?diffNode(wordDiff(x,y)[1]):y;}},
        {label:"σ",num:true,value:function(r){return r.b&&typeof r.b.score==="number"?r.b.score:null;},cell:function(r){return r.b?markCell(r.b.score):"–";}},
        {label:"Δ",num:true,title:"second run's mark minus the first's",value:function(r){return r.delta;},cell:function(r){return r.delta===null?"":el("span",{"class":"delta "+(r.delta>0?"up":r.delta<0?"down":""),text:(r.delta>0?"+":"")+(Math.round(r.delta*100)/100)});}}
      ];
      var t=sortableTable("compare","",cols,"compare");
      function render(){saved.differs=differs.checked;var shown=cmp.rows.filter(function(r){return !differs.checked||r.differs;});t.set(shown,function(r){return{"data-id":r.questionId,"class":r.differs?"differs":""};});count.textContent=shown.length+" of "+cmp.rows.length+" · "+cmp.rows.filter(function(r){return r.differs;}).length+" differ";}
      differs.addEventListener("change",render);
      render();
      app.appendChild(t.box);
    });
  });
}

function showError(e){clear();app.setAttribute("aria-busy","false");app.appendChild(el("p",{"class":"error",text:String(e&&e.message||e)}));}
function route(){
  state.keys=null;state.dirty=false;state.lastKey=null;closeBox();
  app.setAttribute("aria-busy","true");app.removeAttribute("data-shown");
  var hash=location.hash,h=hash.replace(/^#\/?/,"").split("/");
  var go=h[0]==="run"&&h[2]==="q"?function(refreshing){return questionView(h[1],decodeURIComponent(h.slice(3).join("/")),refreshing);}
    :h[0]==="run"?function(refreshing){return runView(h[1],refreshing);}
    :h[0]==="compare"?function(refreshing){return compareView(h[1],h[2],refreshing);}
    :runsView;
  state.refresh=function(){var y=window.scrollY;return go(true).then(function(){window.scrollTo(0,y);});};
  go().then(function(){if(location.hash===hash){app.setAttribute("aria-busy","false");app.setAttribute("data-shown",hash);window.scrollTo(0,0);}}).catch(showError);
}

/* the light and dark looks: as the system, or chosen */
var themeButton=document.getElementById("theme");
function applyTheme(t){if(t==="light"||t==="dark")document.documentElement.setAttribute("data-theme",t);else document.documentElement.removeAttribute("data-theme");themeButton.textContent=t==="light"?"☀ light":t==="dark"?"☾ dark":"◐ auto";}
var theme=localStorage.getItem("eqa-theme")||"auto";applyTheme(theme);
themeButton.addEventListener("click",function(){theme=theme==="auto"?"light":theme==="light"?"dark":"auto";localStorage.setItem("eqa-theme",theme);applyTheme(theme);});

var help=document.getElementById("help");
help.addEventListener("click",function(){help.hidden=true;});
document.addEventListener("keydown",function(e){if(e.ctrlKey||e.metaKey||e.altKey)return;
  if(!help.hidden){if(e.key==="Escape"||e.key==="?")help.hidden=true;e.preventDefault();return;}
  if(e.key==="?"&&!typing()){help.hidden=false;e.preventDefault();return;}if(typing()&&e.key!=="Escape")return;if(typing()&&e.key==="Escape"){document.activeElement.blur();return;}if(state.keys)state.keys(e);});

/* live: what is shown is read again when a run's records change */
var live=document.getElementById("live"),liveText=live.querySelector("span");
function poll(){
  fetch("/api/status",{credentials:"same-origin",cache:"no-store"}).then(function(r){if(!r.ok)throw new Error(String(r.status));return r.json();}).then(function(s){
    live.className="live";
    if(state.stamp!==null&&s.stamp!==state.stamp&&state.refresh&&!typing()&&!state.dirty){state.stamp=s.stamp;state.runs=null;liveText.textContent="updated "+new Date().toLocaleTimeString();state.refresh().catch(showError);}
    else if(state.stamp===null)state.stamp=s.stamp;
  }).catch(function(){live.className="live offline";liveText.textContent="offline";});
}
setInterval(poll,2000);poll();
window.addEventListener("hashchange",route);
route();
})();`;
