/**
 * The live viewer's page, style and browser script. The script builds every element with
 * `textContent` and attributes: nothing it shows is ever parsed as HTML.
 */
import { REPORT_STYLE } from "./assets.js";

export const VIEWER_STYLE = `${REPORT_STYLE}
nav a{margin-right:1em}
.question-list tr{cursor:pointer}.question-list tr:hover{background:#f7f7ff}
.calls li{margin-bottom:.5em}
`;

export const VIEWER_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>eqakit viewer</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/viewer.css"></head>
<body>
<header><h1>eqakit viewer</h1><nav><a href="#/">runs</a><a href="#/compare">compare</a><a href="/report">report</a></nav></header>
<main id="app"><p>loading…</p></main>
<script src="/viewer.js"></script>
</body></html>
`;

export const VIEWER_SCRIPT = `(function(){
"use strict";
var app=document.getElementById("app");
function el(tag,attrs,children){var e=document.createElement(tag);if(attrs)Object.keys(attrs).forEach(function(k){if(k==="text")e.textContent=attrs[k];else if(k==="onclick")e.addEventListener("click",attrs[k]);else e.setAttribute(k,attrs[k]);});(children||[]).forEach(function(c){if(c!==null&&c!==undefined)e.appendChild(typeof c==="string"?document.createTextNode(c):c);});return e;}
function fmt(v,d){return v===null||v===undefined||!isFinite(v)?"–":Number(v).toFixed(d===undefined?1:d);}
function getJson(url){return fetch(url).then(function(r){if(!r.ok)throw new Error(url+": "+r.status);return r.json();});}
function clear(){while(app.firstChild)app.removeChild(app.firstChild);}
function runsView(){
  getJson("/api/runs").then(function(data){
    clear();
    var rows=data.runs.map(function(r){return el("tr",{},[el("td",{},[el("a",{href:"#/run/"+r.index,text:r.label})]),el("td",{text:r.kind}),el("td",{text:r.agent||"–"}),el("td",{text:r.judge||"–"}),el("td",{"class":"num",text:String(r.questions)}),el("td",{"class":"num","data-field":"overall",title:r.scale==="1-5"?"structured score, 1-5 (grounded)":"LLM-Match, 0-100",text:fmt(r.overall,r.scale==="1-5"?2:1)}),el("td",{"class":"num",text:r.ci?"["+fmt(r.ci[0],r.scale==="1-5"?2:1)+", "+fmt(r.ci[1],r.scale==="1-5"?2:1)+"]":"–"})]);});
    app.appendChild(el("h2",{text:"Runs"}));
    app.appendChild(el("table",{"class":"grid",id:"runs"},[el("thead",{},[el("tr",{},["run","kind","agent","judge","questions","score (LLM-Match 0-100 · TAG 1-5)","95% CI"].map(function(h){return el("th",{text:h});}))]),el("tbody",{},rows)]));
  }).catch(showError);
}
function runView(index,params){
  getJson("/api/runs/"+index).then(function(run){
    clear();
    app.appendChild(el("h2",{text:run.label+" ("+run.kind+")"}));
    (run.notes||[]).forEach(function(n){app.appendChild(el("p",{"class":"hint",text:n}));});
    var cats=[""].concat(run.categories);
    var catSel=el("select",{id:"f-category"},cats.map(function(c){var o=el("option",{value:c,text:c||"all categories"});return o;}));
    var scoreSel=el("select",{id:"f-score"},[["","any score"],["5","5"],["4","4"],["3","3"],["2","2"],["1","1"],["0","0 (no answer)"],["failed","not scored"]].map(function(p){return el("option",{value:p[0],text:p[1]});}));
    var search=el("input",{id:"f-search",type:"search",placeholder:"search"});
    var tbody=el("tbody");
    var count=el("span",{id:"f-count"});
    function render(){
      while(tbody.firstChild)tbody.removeChild(tbody.firstChild);
      var c=catSel.value,s=scoreSel.value,t=search.value.toLowerCase(),n=0;
      run.questions.forEach(function(q){
        if(c&&q.category!==c)return;
        if(s==="failed"&&q.score!==null&&q.score!==undefined)return;
        if(s&&s!=="failed"&&String(q.score)!==s)return;
        if(t&&(q.questionId+" "+(q.question||"")+" "+(q.answer||"")).toLowerCase().indexOf(t)<0)return;
        n++;
        tbody.appendChild(el("tr",{"data-id":q.questionId,onclick:function(){location.hash="#/run/"+index+"/q/"+encodeURIComponent(q.questionId);}},[el("td",{},[el("code",{text:q.questionId})]),el("td",{text:q.category||"–"}),el("td",{"class":"text",text:q.question||"–"}),el("td",{"class":"text answer",text:q.answer===null?"(no answer)":q.answer===undefined?"–":q.answer}),el("td",{"class":"num",text:q.score===undefined?"–":q.score===null?"failed":String(q.score)})]));
      });
      count.textContent=n+" of "+run.questions.length;
    }
    [catSel,scoreSel,search].forEach(function(x){x.addEventListener("input",render);x.addEventListener("change",render);});
    var runSel=el("select",{id:"f-run"},[]);
    getJson("/api/runs").then(function(all){all.runs.forEach(function(r){var o=el("option",{value:String(r.index),text:r.label+(r.agent?" · "+r.agent:"")});if(String(r.index)===String(index))o.selected=true;runSel.appendChild(o);});});
    runSel.addEventListener("change",function(){location.hash="#/run/"+runSel.value;});
    app.appendChild(el("div",{"class":"filters"},[runSel,catSel,scoreSel,search,count]));
    app.appendChild(el("table",{"class":"grid question-list",id:"questions"},[el("thead",{},[el("tr",{},["id","category","question","answer","σ"].map(function(h){return el("th",{text:h});}))]),tbody]));
    render();
  }).catch(showError);
}
function questionView(index,id){
  getJson("/api/runs/"+index+"/questions/"+encodeURIComponent(id)).then(function(q){
    clear();
    app.appendChild(el("p",{},[el("a",{href:"#/run/"+index,text:"← "+q.runLabel})]));
    app.appendChild(el("h2",{id:"question-text","class":"text",text:q.question||q.questionId}));
    var dl=el("dl",{id:"question-detail"});
    function row(k,v,cls){dl.appendChild(el("dt",{text:k}));dl.appendChild(el("dd",{"class":"text "+(cls||""),text:v}));}
    row("id",q.questionId);row("category",q.category||"–");row("ground truth",q.groundTruth===undefined?"–":q.groundTruth+(q.extraAnswers?" (also: "+q.extraAnswers.join("; ")+")":""));
    row("answer",q.answer===null?"(no answer)":q.answer===undefined?"–":q.answer,"answer");
    if(q.forceGuess==="guess")row("agent's own answer (replaced by force-a-guess)",q.agentAnswer===null?"(nothing)":q.agentAnswer);
    if(q.tag){var t=q.tag,e=t.errors;
      row("structured score (grounded)",t.score===null?"failed":fmt(t.groundedScore,2)+" · ungrounded "+fmt(t.ungroundedScore,2)+(t.valid?"":" · invalid answer"));
      if(t.truthText!==null)row("true structure",t.truthText,"structured-truth");
      if(t.predictedText!==null)row(t.source==="judge"?"structure the judge read":"structure scored",t.predictedText,"structured-predicted");
      if(e)row("errors","objects: "+e.objectFalsePositives+" false positive(s), "+e.objectFalseNegatives+" false negative(s); predicates: "+e.predicateFalsePositives+" false positive(s), "+e.predicateFalseNegatives+" false negative(s)");
    }else row("LLM-Match σ",q.score===undefined?"–":q.score===null?"failed":String(q.score)+" ("+fmt(q.points)+" points)");
    if(q.error)row("error",q.error);
    app.appendChild(dl);
    if(q.frames.length){app.appendChild(el("h3",{text:"Frames the agent used"}));app.appendChild(el("div",{"class":"frames",id:"frames"},q.frames.map(function(f){var base="/api/runs/"+index+"/frames/"+encodeURIComponent(q.questionId)+"/"+f;return el("a",{href:base+"?size=full",target:"_blank",rel:"noopener","class":"frame",title:"frame "+f},[el("img",{src:base+"?size=thumb",alt:"frame "+f,width:"120"})]);})));}
    if(q.judgeReplies.length){app.appendChild(el("h3",{text:"Judge's reply"}));q.judgeReplies.forEach(function(r){app.appendChild(el("pre",{"class":"text judge-reply",text:r===null?"(empty)":r}));});}
    if(q.calls.length){app.appendChild(el("h3",{text:"Trace"}));app.appendChild(el("ol",{"class":"calls",id:"trace"},q.calls.map(function(c){return el("li",{},[el("b",{text:c.role+" · "+c.model+" · "+c.prompt+(c.cached?" · cached":"")+(c.frames?" · "+c.frames.length+" frame(s)":"")}),el("pre",{"class":"text",text:c.reply===null?"(no reply)":c.reply})]);})));}
  }).catch(showError);
}
function compareView(a,b){
  getJson("/api/runs").then(function(data){
    clear();
    app.appendChild(el("h2",{text:"Compare two runs"}));
    function sel(id,v){return el("select",{id:id},data.runs.map(function(r){var o=el("option",{value:String(r.index),text:r.label});if(String(r.index)===String(v))o.selected=true;return o;}));}
    var sa=sel("cmp-a",a===undefined?0:a),sb=sel("cmp-b",b===undefined?Math.min(1,data.runs.length-1):b);
    function go(){location.hash="#/compare/"+sa.value+"/"+sb.value;}
    sa.addEventListener("change",go);sb.addEventListener("change",go);
    app.appendChild(el("div",{"class":"filters"},[sa,document.createTextNode(" vs "),sb]));
    if(a===undefined)return;
    getJson("/api/compare?a="+a+"&b="+b).then(function(cmp){
      var tbody=el("tbody",{},cmp.rows.map(function(r){var d=r.a&&r.b&&r.a.score!==r.b.score;return el("tr",{"class":d?"differs":"","data-id":r.questionId},[el("td",{},[el("a",{href:"#/run/"+a+"/q/"+encodeURIComponent(r.questionId)},[el("code",{text:r.questionId})])]),el("td",{"class":"text",text:r.question||"–"}),el("td",{"class":"text answer",text:r.a?String(r.a.answer):"–"}),el("td",{"class":"num",text:r.a&&r.a.score!==undefined&&r.a.score!==null?String(r.a.score):"–"}),el("td",{"class":"text answer",text:r.b?String(r.b.answer):"–"}),el("td",{"class":"num",text:r.b&&r.b.score!==undefined&&r.b.score!==null?String(r.b.score):"–"})]);}));
      app.appendChild(el("p",{id:"cmp-summary",text:cmp.summary}));
      app.appendChild(el("table",{"class":"grid",id:"compare"},[el("thead",{},[el("tr",{},["id","question",cmp.a+": answer","σ",cmp.b+": answer","σ"].map(function(h){return el("th",{text:h});}))]),tbody]));
    }).catch(showError);
  }).catch(showError);
}
function showError(e){clear();app.appendChild(el("p",{"class":"error",text:String(e&&e.message||e)}));}
function route(){
  var h=location.hash.replace(/^#\\/?/,"").split("/");
  if(h[0]==="run"&&h[2]==="q")return questionView(h[1],decodeURIComponent(h.slice(3).join("/")));
  if(h[0]==="run")return runView(h[1]);
  if(h[0]==="compare")return compareView(h[1],h[2]);
  return runsView();
}
window.addEventListener("hashchange",route);
route();
})();`;
