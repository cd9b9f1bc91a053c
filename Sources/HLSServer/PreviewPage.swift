/// `GET /`: a page that plays the stream and shows how far behind the capture clock the picture is.
///
/// Self-contained (nothing is fetched from elsewhere): Safari plays the playlist natively; other
/// browsers get a small Media Source player that follows the master playlist's first variant and its
/// audio rendition. The delay is the wall clock minus the EXT-X-PROGRAM-DATE-TIME of the frame shown.
enum PreviewPage {
    static let html = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>hlscap preview</title>
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <style>
        body { font: 15px system-ui, sans-serif; margin: 1em; background: #111; color: #eee; }
        video { width: 100%; max-width: 960px; background: #000; display: block; }
        #status { margin-top: .6em; font-variant-numeric: tabular-nums; }
        </style></head>
        <body>
        <video id="video" muted autoplay playsinline controls></video>
        <div id="status">starting…</div>
        <script>
        "use strict";
        const video = document.getElementById("video");
        const status = document.getElementById("status");
        const query = new URLSearchParams(location.search);
        // Program date-times of what was appended: media time at which each segment starts, and its date.
        const timeline = [];
        window.hlscapPreview = { latencySeconds: null, error: null, appended: 0 };

        function attributes(line) {
          const found = {};
          const pattern = /([A-Z0-9-]+)=("[^"]*"|[^,]*)/g;
          let match;
          while ((match = pattern.exec(line))) found[match[1]] = match[2].replace(/^"|"$/g, "");
          return found;
        }
        // The credentials the page was opened with (a token, or a signed URL's fields) go with the
        // first playlist; the server carries them into every URI of the playlists it serves.
        function withCredentials(url) {
          const carried = new URL(url);
          for (const name of ["token", "prefix", "expires", "signature"])
            if (query.has(name) && !carried.searchParams.has(name)) carried.searchParams.set(name, query.get(name));
          return carried.href;
        }
        async function get(url, kind) {
          const response = await fetch(url, { cache: "no-cache" });
          if (!response.ok) throw new Error(url + " answered " + response.status);
          return kind === "text" ? response.text() : response.arrayBuffer();
        }
        function parseMedia(body, base) {
          const playlist = { segments: [], target: 2, ended: false };
          let sequence = 0, map = null, date = null, duration = 0;
          for (const line of body.split("\\n")) {
            if (line.startsWith("#EXT-X-TARGETDURATION:")) playlist.target = Number(line.slice(22));
            else if (line.startsWith("#EXT-X-MEDIA-SEQUENCE:")) sequence = Number(line.slice(22));
            else if (line.startsWith("#EXT-X-MAP:")) map = new URL(attributes(line).URI, base).href;
            else if (line.startsWith("#EXT-X-PROGRAM-DATE-TIME:")) date = Date.parse(line.slice(25));
            else if (line.startsWith("#EXTINF:")) duration = parseFloat(line.slice(8));
            else if (line === "#EXT-X-ENDLIST") playlist.ended = true;
            else if (line && !line.startsWith("#")) {
              playlist.segments.push({ uri: new URL(line, base).href, map, date, duration,
                                       sequence: sequence + playlist.segments.length });
              date = null;
            }
          }
          return playlist;
        }
        async function variant() {
          const masterURL = withCredentials(new URL(query.get("src") || "master.m3u8", location.href).href);
          let body;
          try { body = await get(masterURL, "text"); } catch (error) {
            const single = withCredentials(new URL("playlist.m3u8", location.href).href);
            return [{ url: single, codecs: null, primary: true }];
          }
          const lines = body.split("\\n");
          const audio = {};
          let chosen = null;
          for (let index = 0; index < lines.length; index++) {
            const line = lines[index];
            if (line.startsWith("#EXT-X-MEDIA:")) {
              const media = attributes(line);
              if (media.TYPE === "AUDIO" && media.URI && (media.DEFAULT === "YES" || !audio[media["GROUP-ID"]]))
                audio[media["GROUP-ID"]] = new URL(media.URI, masterURL).href;
            } else if (line.startsWith("#EXT-X-STREAM-INF:") && !chosen) {
              chosen = { info: attributes(line), url: new URL(lines[index + 1].trim(), masterURL).href };
            }
          }
          if (!chosen) return [{ url: masterURL, codecs: null, primary: true }];
          const codecs = (chosen.info.CODECS || "").split(",");
          const audioURL = chosen.info.AUDIO && audio[chosen.info.AUDIO];
          if (!audioURL) return [{ url: chosen.url, codecs: codecs.join(","), primary: true }];
          return [
            { url: chosen.url, codecs: codecs.filter(c => !c.startsWith("mp4a")).join(","), primary: true },
            { url: audioURL, codecs: codecs.filter(c => c.startsWith("mp4a")).join(","), primary: false, audio: true },
          ];
        }
        function append(buffer, bytes) {
          return new Promise((resolve, reject) => {
            buffer.addEventListener("updateend", resolve, { once: true });
            buffer.addEventListener("error", () => reject(new Error("the browser refused a segment")), { once: true });
            buffer.appendBuffer(bytes);
          });
        }
        async function follow(source, lane) {
          const type = (lane.audio ? "audio/mp4" : "video/mp4") + (lane.codecs ? "; codecs=\\"" + lane.codecs + "\\"" : "");
          const buffer = source.addSourceBuffer(type);
          let next = null, map = null;
          for (;;) {
            const playlist = parseMedia(await get(lane.url, "text"), lane.url);
            if (next === null) {
              const start = playlist.ended ? 0 : Math.max(0, playlist.segments.length - 3);
              next = playlist.segments.length ? playlist.segments[start].sequence : 0;
            }
            for (const segment of playlist.segments.filter(s => s.sequence >= next)) {
              if (segment.map !== map) { await append(buffer, await get(segment.map, "bytes")); map = segment.map; }
              const start = buffer.buffered.length ? buffer.buffered.end(buffer.buffered.length - 1) : null;
              await append(buffer, await get(segment.uri, "bytes"));
              if (lane.primary && segment.date) {
                const begin = start === null ? buffer.buffered.start(0) : start;
                timeline.push({ begin, date: segment.date });
              }
              next = segment.sequence + 1;
              window.hlscapPreview.appended += 1;
              // Media times start where the stream's timeline does (10 s for hlscap): go there.
              if (lane.primary && buffer.buffered.length && video.currentTime < buffer.buffered.start(0))
                video.currentTime = buffer.buffered.start(0);
            }
            if (playlist.ended) return;
            await new Promise(resolve => setTimeout(resolve, playlist.target * 500));
          }
        }
        function showDelay() {
          const entry = timeline.filter(item => item.begin <= video.currentTime).pop();
          if (entry) {
            const shown = entry.date + (video.currentTime - entry.begin) * 1000;
            const latency = (Date.now() - shown) / 1000;
            window.hlscapPreview.latencySeconds = latency;
            status.textContent = "playing " + video.currentTime.toFixed(1) + " s, " + latency.toFixed(2)
              + " s behind the capture clock";
          }
          requestAnimationFrame(showDelay);
        }
        async function start() {
          const lanes = await variant();
          if (video.canPlayType("application/vnd.apple.mpegurl") && !window.MediaSource) {
            video.src = lanes[0].url;
            status.textContent = "playing natively";
            return;
          }
          const source = new MediaSource();
          video.src = URL.createObjectURL(source);
          await new Promise(resolve => source.addEventListener("sourceopen", resolve, { once: true }));
          requestAnimationFrame(showDelay);
          await Promise.all(lanes.map(lane => follow(source, lane)));
          source.endOfStream();
        }
        start().catch(error => {
          window.hlscapPreview.error = String(error);
          status.textContent = "cannot play: " + error;
        });
        </script>
        </body></html>
        """
}
