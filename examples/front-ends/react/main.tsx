import { createRoot } from 'react-dom/client';
import { Composer } from './Composer.tsx';
import '../shared/style.css';

createRoot(document.getElementById('app')!).render(<Composer />);
