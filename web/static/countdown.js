// The claim page's countdown (templates/offer.html): the time left on
// the offer, ticking every second from the server's figure. Without
// JavaScript the page shows the time left as it was rendered.
(function(){var el=document.getElementById("countdown");if(!el)return;
var end=Date.now()+1000*parseInt(el.dataset.seconds,10);
function tick(){var s=Math.max(0,Math.round((end-Date.now())/1000));
el.textContent=(s>=3600?Math.floor(s/3600)+" h "+Math.floor(s%3600/60)+" min":s>=60?Math.floor(s/60)+" min "+(s%60)+" s":s+" s")+" left";
if(s>0)setTimeout(tick,1000);}tick();})();
