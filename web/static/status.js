// The status page (templates/status.html): a live offer's countdown, and
// the entry followed live — its place updated in words, the page reloaded
// when its state changes. Without JavaScript the page works on reload.
(function(){
var el=document.getElementById("countdown");
if(el){var end=Date.now()+1000*parseInt(el.dataset.seconds,10);
(function tick(){var s=Math.max(0,Math.round((end-Date.now())/1000));
el.textContent=(s>=3600?Math.floor(s/3600)+" h "+Math.floor(s%3600/60)+" min":s>=60?Math.floor(s/60)+" min "+(s%60)+" s":s+" s")+" left";
if(s>0)setTimeout(tick,1000);})();}
var live=document.getElementById("live");if(!live||!window.fetch)return;
var d=live.dataset;
function poll(){fetch("/v1/status/"+encodeURIComponent(d.token),{cache:"no-store"}).then(function(r){return r.ok?r.json():null}).then(function(v){
 if(!v)return;
 if(v.state!==d.state){location.reload();return;}
 if(v.state==="waiting"){var now=String(v.position===undefined?"<nil>":v.position)+" "+String(v.band===undefined?"<nil>":v.band);
  if(now!==d.rendered){d.rendered=now;var st=document.getElementById("state");
   if(v.position!==undefined)st.textContent="You are number "+v.position+" in line for "+d.what+".";
   else if(v.band!==undefined)st.textContent="You are in the "+v.band+" in line for "+d.what+".";}}
}).catch(function(){}).then(function(){setTimeout(poll,every);});}
var every=parseInt(d.poll,10)||5000;
setTimeout(poll,every);
})();
