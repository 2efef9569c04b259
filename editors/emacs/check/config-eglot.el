;; Batch check of flakesense.el with eglot against stand-in servers (run by run.sh): opens
;; $FILE, starts flakesense through rass beside the companion server (or alone with
;; MULTIPLEXER=none), waits for the diagnostics of both, and runs a server command.
(setq debug-on-error t)
(require 'eglot)
(load (getenv "FLAKESENSE_EL"))
(setq flakesense-warning-threshold 0.9
      flakesense-exclude '("gen/**")
      flakesense-debounce-ms 50
      flakesense-models '("ci/flaky.idx"))
(when (equal (getenv "MULTIPLEXER") "none") (setq flakesense-eglot-multiplexer nil))
(flakesense-eglot-setup)
(when (getenv "WSCONF")
  (setq-default eglot-workspace-configuration '(:flakesense (:k 5))))
(find-file (getenv "FILE"))
(apply #'eglot (eglot--guess-contact))
(let ((deadline (+ (float-time) 60)))
  (while (and (< (float-time) deadline)
              (< (length (flymake-diagnostics)) (if (equal (getenv "MULTIPLEXER") "none") 1 2)))
    (accept-process-output nil 0.2)))
(dolist (d (flymake-diagnostics))
  (message "diagnostic: %s" (flymake-diagnostic-text d)))
(eglot-execute-command (eglot-current-server) "flakesense.markFlaky"
                       (vector (eglot--path-to-uri (buffer-file-name)) "Test#waits"))
(accept-process-output nil 1)
(eglot-shutdown (eglot-current-server))
(message "done")
